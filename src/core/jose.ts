/** jose, loaded on the first key or token: a service nobody asks for a JWT never pays for it. */
let jose: typeof import("jose") | undefined;

export const loadJose = async (): Promise<typeof import("jose")> => (jose ??= await import("jose"));
