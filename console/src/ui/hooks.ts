import { useCallback, useEffect, useState } from "react";
import { describeError, type Problem } from "../api.ts";

export interface Loaded<T> {
  data: T | undefined;
  problem: Problem | null;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (or on reload); the last data stays shown while the next loads. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; problem: Problem | null; loading: boolean }>({
    data: undefined,
    problem: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, problem: null, loading: false }),
      (err: unknown) => live && setState((s) => ({ data: s.data, problem: describeError(err), loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export interface Action {
  busy: boolean;
  problem: Problem | null;
  notice: string | null;
  /** Runs one server call: its failure is kept (and shown), its success note announced. */
  run<T>(call: () => Promise<T>, done?: string | ((result: T) => string)): Promise<T | undefined>;
  clear(): void;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  async function run<T>(call: () => Promise<T>, done?: string | ((result: T) => string)) {
    setBusy(true);
    setProblem(null);
    setNotice(null);
    try {
      const result = await call();
      if (done) setNotice(typeof done === "function" ? done(result) : done);
      return result;
    } catch (err) {
      setProblem(describeError(err));
      return undefined;
    } finally {
      setBusy(false);
    }
  }
  return { busy, problem, notice, run, clear: () => (setProblem(null), setNotice(null)) };
}
