/**
 * A loop of rounds (an ingestion of new events, a claim of due deliveries) run when something announces work —
 * a NOTIFY, the gateway's job.processing, a freed delivery slot — or, failing that, every `idleMs`.
 *
 * Rounds are paced: one begins at most once per `minGapMs`, and every wake that arrives during a round or the gap
 * after it is served by the one next round. Without pacing each job woke ingestion and delivery once per event:
 * at 100 jobs/s the dispatcher ran about one ingestion (two transactions, each taking the cursor's row lock, so
 * each commit waits for a WAL flush) and one claim per job, the webhook path's largest share of the gateway's
 * statements (issue 26). A round reads everything committed before it began, so a wake is never lost: one that
 * arrives while a round runs brings another round after the gap.
 */
export interface RoundLoopOptions {
  /** One round; resolves `true` when it left work behind (a full batch), so the next runs at once, unpaced. It
   *  handles its own errors (a rejection or a throw counts as a round with nothing left behind). */
  round: () => Promise<boolean>;
  /** How long to sleep when nothing wakes the loop (read at each sleep: it may depend on a LISTEN's state). */
  idleMs: () => number;
  /** Least time from the start of one round to the start of the next woken one. */
  minGapMs: number;
}

export interface RoundLoop {
  /** Announces work: the next round begins as soon as the pacing allows. */
  wake(): void;
  /** Ends the loop after the round in progress (a sleep or a gap ends at once). */
  stop(): Promise<void>;
}

export function startRoundLoop(options: RoundLoopOptions): RoundLoop {
  let stopping = false;
  // A wake that had no sleep to end (it came during a round or a gap): the next round serves it.
  let pending = false;
  // The sleep in progress: `end` finishes it (stop), `wakeable` says whether a wake may (not during a gap).
  let sleeping: { end: () => void; wakeable: boolean } | null = null;

  const sleep = (ms: number, wakeable: boolean) =>
    new Promise<void>((resolve) => {
      const end = () => {
        clearTimeout(timer);
        sleeping = null;
        resolve();
      };
      const timer = setTimeout(end, ms);
      sleeping = { end, wakeable };
    });

  // A round that throws before its first await would otherwise reject the loop itself: it would stop for good,
  // unnoticed until stop() rethrew.
  const runRound = async () => {
    try {
      return await options.round();
    } catch {
      return false;
    }
  };

  const run = async () => {
    // The first round starts once the caller holds the loop: a round may wake it, or another loop started next.
    await Promise.resolve();
    while (!stopping) {
      // Monotonic: a wall-clock step backwards would stretch the gap, during which wakes only wait.
      const began = performance.now();
      // Wakes so far announced work committed before this round begins: it reads that work.
      pending = false;
      if (await runRound()) continue;
      if (stopping) break;
      if (!pending) await sleep(options.idleMs(), true);
      const rest = options.minGapMs - (performance.now() - began);
      // Wakes during the gap set `pending`: the round after the gap serves them all.
      if (rest > 0 && !stopping) await sleep(rest, false);
    }
  };
  const loop = run();

  return {
    wake() {
      if (sleeping?.wakeable) sleeping.end();
      else pending = true;
    },
    async stop() {
      stopping = true;
      sleeping?.end();
      await loop;
    },
  };
}
