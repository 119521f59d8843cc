import { useCallback, useEffect, useState } from "react";
import { plainError } from "./chain/plainError";

export type AsyncState<T> =
  | { status: "loading"; data?: undefined; error?: undefined }
  | { status: "ready"; data: T; error?: undefined }
  | { status: "error"; data?: undefined; error: string };

/** Runs `load` when `deps` change; errors become plain words. `reload` runs it again. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): AsyncState<T> & { reload: () => void } {
  const [state, setState] = useState<AsyncState<T>>({ status: "loading" });
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  useEffect(() => {
    let live = true;
    setState((previous) => (previous.status === "ready" ? previous : { status: "loading" }));
    load().then(
      (data) => live && setState({ status: "ready", data }),
      (error: unknown) => live && setState({ status: "error", error: plainError(error) }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload };
}
