/**
 * Child-process side of the bench protocol: the first stdout line is a JSON "ready" record;
 * over IPC the parent may ask for this process's CPU time ("cpu") or tell it to stop ("stop").
 */
import { readFileSync } from "node:fs";

export interface CpuSample {
  /** user + system CPU time of this process (all threads), in microseconds. */
  cpuMicros: number;
  /** The same for the main (event-loop) thread alone; Linux only (/proc), else null. 10 ms ticks. */
  mainThreadCpuMicros: number | null;
}

const USER_HZ = 100;

export function mainThreadCpuMicros(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 of stat(5) (utime, stime), counted from the state field (3).
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / USER_HZ;
  } catch {
    return null;
  }
}

export function reportReady(info: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid, ...info })}\n`);
}

export function serveProbe(onStop: () => Promise<void> | void): void {
  const stop = async () => {
    try {
      await onStop();
    } finally {
      process.exit(0);
    }
  };
  process.on("message", (msg: unknown) => {
    const m = msg as { type?: string; id?: number };
    if (m?.type === "cpu") {
      const u = process.cpuUsage();
      const sample: CpuSample = { cpuMicros: u.user + u.system, mainThreadCpuMicros: mainThreadCpuMicros() };
      process.send?.({ type: "cpu", id: m.id, ...sample });
    } else if (m?.type === "stop") {
      void stop();
    }
  });
  process.on("disconnect", () => void stop());
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
}
