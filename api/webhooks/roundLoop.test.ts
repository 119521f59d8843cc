import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startRoundLoop, type RoundLoop, type RoundLoopOptions } from "./roundLoop.js";

// The dispatcher's paced loop on its own, on fake timers (setTimeout and performance.now): every time below is
// exact, so the pacing is checked by when rounds start, not by a wall clock that a loaded machine stretches.

const IDLE_MS = 1_000;
const GAP_MS = 50;

/** Lets every callback already due run (setImmediate is left real). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A round double: records when each round starts (ms since the test began) and answers from a script — `true`
 * (work left), `false`, or an error to reject with; nothing scripted answers `false`. `hold()` keeps the next
 * round running until `release()`.
 */
class Rounds {
  readonly starts: number[] = [];
  readonly script: (boolean | Error)[] = [];
  private held: ((more: boolean) => void) | null = null;
  private holdNext = false;
  private readonly t0 = performance.now();

  readonly round = (): Promise<boolean> => {
    this.starts.push(performance.now() - this.t0);
    if (this.holdNext) {
      this.holdNext = false;
      return new Promise((resolve) => (this.held = resolve));
    }
    const answer = this.script.shift() ?? false;
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
  };

  hold(): void {
    this.holdNext = true;
  }

  release(more = false): void {
    this.held?.(more);
    this.held = null;
  }
}

let loops: RoundLoop[] = [];
function start(round: RoundLoopOptions["round"], options: Partial<Omit<RoundLoopOptions, "round">> = {}): RoundLoop {
  const loop = startRoundLoop({ round, idleMs: () => IDLE_MS, minGapMs: GAP_MS, ...options });
  loops.push(loop);
  return loop;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});

afterEach(async () => {
  await Promise.all(loops.map((loop) => loop.stop()));
  loops = [];
  vi.useRealTimers();
});

describe("startRoundLoop", () => {
  it("runs a round at start", async () => {
    const rounds = new Rounds();
    start(rounds.round);
    await settle();
    expect(rounds.starts).toEqual([0]);
  });

  it("wakes during a round are served by one next round", async () => {
    const rounds = new Rounds();
    rounds.hold();
    const loop = start(rounds.round);
    await settle();
    loop.wake();
    loop.wake();
    loop.wake();
    await vi.advanceTimersByTimeAsync(20);
    rounds.release();
    await vi.advanceTimersByTimeAsync(IDLE_MS - 100);
    expect(rounds.starts).toEqual([0, GAP_MS]);
  });

  it("wakes during the gap after a woken round are served by one next round", async () => {
    const rounds = new Rounds();
    const loop = start(rounds.round);
    await settle();
    await vi.advanceTimersByTimeAsync(10);
    loop.wake(); // ends the idle sleep; the gap lasts until GAP_MS
    await vi.advanceTimersByTimeAsync(10);
    loop.wake();
    loop.wake();
    await vi.advanceTimersByTimeAsync(IDLE_MS - 100);
    expect(rounds.starts).toEqual([0, GAP_MS]);
  });

  it("a round never starts sooner than minGapMs after the previous woken one", async () => {
    const rounds = new Rounds();
    const loop = start(rounds.round);
    await settle();
    loop.wake();
    await vi.advanceTimersByTimeAsync(GAP_MS - 1);
    expect(rounds.starts).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(rounds.starts).toEqual([0, GAP_MS]);
  });

  it("a wake every millisecond brings one round per minGapMs", async () => {
    const rounds = new Rounds();
    const loop = start(rounds.round);
    await settle();
    for (let ms = 0; ms < 10 * GAP_MS; ms++) {
      loop.wake();
      await vi.advanceTimersByTimeAsync(1);
    }
    // 0, 50, … 500: the wakes of 10 gaps, and the start.
    expect(rounds.starts).toEqual(Array.from({ length: 11 }, (_, i) => i * GAP_MS));
  });

  it("a wake once the gap has passed starts a round at once", async () => {
    const rounds = new Rounds();
    const loop = start(rounds.round);
    await settle();
    await vi.advanceTimersByTimeAsync(200);
    loop.wake();
    await settle();
    expect(rounds.starts).toEqual([0, 200]);
  });

  it("a round that left work runs again at once", async () => {
    const rounds = new Rounds();
    rounds.script.push(true, true, false);
    start(rounds.round);
    await settle();
    expect(rounds.starts).toEqual([0, 0, 0]);
    await vi.advanceTimersByTimeAsync(IDLE_MS - 1);
    expect(rounds.starts).toHaveLength(3);
  });

  it("a round that left work runs again at once, however recently the previous one began", async () => {
    const rounds = new Rounds();
    const loop = start(rounds.round);
    await settle();
    loop.wake();
    await vi.advanceTimersByTimeAsync(GAP_MS);
    rounds.script.push(true);
    loop.wake();
    await vi.advanceTimersByTimeAsync(GAP_MS);
    expect(rounds.starts).toEqual([0, GAP_MS, 2 * GAP_MS, 2 * GAP_MS]);
  });

  it("with no wake it runs every idleMs", async () => {
    const rounds = new Rounds();
    start(rounds.round, { idleMs: () => 100 });
    await settle();
    await vi.advanceTimersByTimeAsync(350);
    expect(rounds.starts).toEqual([0, 100, 200, 300]);
  });

  it("reads idleMs at each sleep", async () => {
    const rounds = new Rounds();
    let idleMs = 100;
    start(rounds.round, { idleMs: () => idleMs });
    await settle();
    idleMs = 1_000; // the sleep in progress keeps its 100 ms
    await vi.advanceTimersByTimeAsync(100 + 999);
    expect(rounds.starts).toEqual([0, 100]);
    await vi.advanceTimersByTimeAsync(1);
    expect(rounds.starts).toEqual([0, 100, 1_100]);
  });

  it("stop ends a sleep at once", async () => {
    const rounds = new Rounds();
    const loop = start(rounds.round);
    await settle();
    let stopped = false;
    void loop.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("stop ends a gap at once, and the wakes it was holding start no round", async () => {
    const rounds = new Rounds();
    const loop = start(rounds.round);
    await settle();
    loop.wake();
    loop.wake();
    let stopped = false;
    void loop.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(2 * IDLE_MS);
    expect(rounds.starts).toEqual([0]);
  });

  it("stop waits for the round in progress, then starts no other even when it left work", async () => {
    const rounds = new Rounds();
    rounds.hold();
    const loop = start(rounds.round);
    await settle();
    let stopped = false;
    void loop.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    rounds.release(true);
    await settle();
    expect(stopped).toBe(true);
    expect(rounds.starts).toEqual([0]);
  });

  it("a rejected round counts as nothing left, and the loop goes on", async () => {
    const rounds = new Rounds();
    rounds.script.push(new Error("database down"));
    start(rounds.round);
    await settle();
    expect(rounds.starts).toEqual([0]);
    await vi.advanceTimersByTimeAsync(IDLE_MS);
    expect(rounds.starts).toEqual([0, IDLE_MS]);
  });

  it("a round that throws before returning a promise counts as nothing left, and the loop goes on", async () => {
    let calls = 0;
    const loop = start(() => {
      calls++;
      if (calls === 1) throw new Error("thrown, not rejected");
      return Promise.resolve(false);
    });
    await settle();
    loop.wake();
    await vi.advanceTimersByTimeAsync(GAP_MS);
    expect(calls).toBe(2);
  });

  it("starts its first round only once startRoundLoop has returned the loop", async () => {
    let woken: boolean | undefined;
    const loop: RoundLoop = start(async () => {
      woken = loop !== undefined;
      return false;
    });
    await settle();
    expect(woken).toBe(true);
  });
});
