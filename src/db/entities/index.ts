export { User, type IUser } from "./user.ts";
export { Session, type ISession } from "./session.ts";
export { Account, type IAccount } from "./account.ts";
export { Verification, type IVerification } from "./verification.ts";

import { Account } from "./account.ts";
import { Session } from "./session.ts";
import { User } from "./user.ts";
import { Verification } from "./verification.ts";

export const entities = [User, Session, Account, Verification];
