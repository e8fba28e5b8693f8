/**
 * Where `create-admin` gets a new admin's password without putting it in the process list or
 * the shell history, in this order: PORTCULLIS_ADMIN_PASSWORD; standard
 * input when it is piped (read to its end, one trailing newline dropped); a prompt without echo
 * when standard input is a terminal. `--password` still works but warns (see cli.ts).
 */

import { BootstrapError } from "./modules/admin/index.ts";

export const PASSWORD_ENV = "PORTCULLIS_ADMIN_PASSWORD";
/** Far beyond any password length limit; a runaway pipe is cut off here. */
const MAX_STDIN_BYTES = 64 * 1024;

export const PASSWORD_FLAG_WARNING =
  `warning: --password leaves the password in the process list and shell history; ` +
  `pipe it on standard input or set ${PASSWORD_ENV} instead`;

async function readPiped(stdin: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > MAX_STDIN_BYTES) throw new BootstrapError("the password on standard input is too long");
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "");
}

/** Reads one line from the terminal in raw mode, echoing nothing. */
function promptHidden(question: string, stdin: NodeJS.ReadStream, out: NodeJS.WriteStream): Promise<string> {
  // Echo off before the question shows: input typed right after it is never echoed.
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.resume();
  out.write(question);
  return new Promise((resolve, reject) => {
    let value = "";
    const finish = (err?: Error) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      out.write("\n");
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n" || ch === "\u0004") return finish();
        if (ch === "\u0003") return finish(new BootstrapError("cancelled"));
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on("data", onData);
  });
}

async function promptTwice(stdin: NodeJS.ReadStream, out: NodeJS.WriteStream): Promise<string> {
  const first = await promptHidden("Password for the new admin: ", stdin, out);
  if (!first) return first;
  const again = await promptHidden("Repeat it: ", stdin, out);
  if (again !== first) throw new BootstrapError("the two passwords differ");
  return first;
}

/** The password from the environment, a pipe or the terminal; "" when none was given. */
export async function readAdminPassword(
  env: NodeJS.ProcessEnv = process.env,
  stdin: NodeJS.ReadStream = process.stdin,
  out: NodeJS.WriteStream = process.stderr,
): Promise<string> {
  const fromEnv = env[PASSWORD_ENV];
  if (fromEnv) return fromEnv;
  return stdin.isTTY ? promptTwice(stdin, out) : readPiped(stdin);
}
