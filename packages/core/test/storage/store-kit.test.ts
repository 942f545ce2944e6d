import { describe, expect, it } from 'vitest';
import { grouped, keyWatches } from '@payhook/core/store';

/** A send that records each group it gets and answers each input doubled. */
function recorder() {
  const groups: number[][] = [];
  const send = async (inputs: number[]) => {
    groups.push([...inputs]);
    return inputs.map((n) => n * 2);
  };
  return { groups, send };
}

describe('grouped(): one send for the calls of one turn', () => {
  it('sends the calls made in one turn together, in order, and gives each call its own result', async () => {
    const { groups, send } = recorder();
    const call = grouped(send);
    const results = await Promise.all([1, 2, 3, 4].map(call));
    expect(groups).toEqual([[1, 2, 3, 4]]);
    expect(results).toEqual([2, 4, 6, 8]);
  });

  it('sends calls of different turns apart', async () => {
    const { groups, send } = recorder();
    const call = grouped(send);
    const first = call(1);
    await new Promise((resolve) => setImmediate(resolve));
    const second = call(2);
    expect(await Promise.all([first, second])).toEqual([2, 4]);
    expect(groups).toEqual([[1], [2]]);
  });

  it('splits a turn of more than `max` calls into groups of at most `max`', async () => {
    const { groups, send } = recorder();
    const call = grouped(send, 2);
    expect(await Promise.all([1, 2, 3, 4, 5].map(call))).toEqual([2, 4, 6, 8, 10]);
    expect(groups).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('rejects every call of a group whose send fails, and only those', async () => {
    const call = grouped(async (inputs: number[]) => {
      if (inputs.includes(3)) throw new Error('the server refused the group');
      return inputs;
    }, 2);
    const settled = await Promise.allSettled([1, 2, 3, 4].map(call));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected']);
    expect((settled[2] as PromiseRejectedResult).reason.message).toBe('the server refused the group');
  });

  it('rejects the calls when send throws before it returns a promise', async () => {
    const call = grouped((): Promise<number[]> => {
      throw new Error('thrown at once');
    });
    await expect(Promise.all([call(1), call(2)])).rejects.toThrow('thrown at once');
  });
});

describe('keyWatches(): a copy told when a running key changes', () => {
  it('resolves a waiting changed() when its key changes, and not for another key', async () => {
    const watches = keyWatches();
    const w = watches.watch('a');
    let told = false;
    const waiting = w.changed().then(() => (told = true));
    watches.changed('b');
    await Promise.resolve();
    expect(told).toBe(false);
    watches.changed('a');
    await waiting;
    expect(told).toBe(true);
  });

  it('remembers a change that came before changed() was called, once', async () => {
    const watches = keyWatches();
    const w = watches.watch('a');
    watches.changed('a');
    await w.changed();
    let again = false;
    void w.changed().then(() => (again = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(again).toBe(false);
  });

  it('wakes every watch with all(), and forgets a stopped one', async () => {
    const watches = keyWatches();
    const [a, b] = [watches.watch('a'), watches.watch('b')];
    expect(watches.size).toBe(2);
    b.stop();
    expect(watches.size).toBe(1);
    watches.all();
    await a.changed();
    a.stop();
    expect(watches.size).toBe(0);
  });
});
