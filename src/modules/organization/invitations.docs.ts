export const invitationDocs = {};
