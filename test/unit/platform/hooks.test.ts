import { Hook } from '../../../src/platform/events/hooks';

describe('Hook', () => {
  it('run calls the listeners in the order they were added, awaiting each', async () => {
    const hook = new Hook<[string]>();
    const heard: string[] = [];
    hook.add(async (x) => {
      await new Promise((r) => setTimeout(r, 5));
      heard.push(`a:${x}`);
    });
    hook.add((x) => void heard.push(`b:${x}`));
    await hook.run('1');
    expect(heard).toEqual(['a:1', 'b:1']);
  });

  it('run lets the first error propagate and calls no later listener', async () => {
    const hook = new Hook<[]>();
    const heard: string[] = [];
    hook.add(async () => {
      throw new Error('roll back');
    });
    hook.add(() => void heard.push('later'));
    await expect(hook.run()).rejects.toThrow('roll back');
    expect(heard).toEqual([]);
  });

  it('notify calls every listener in order and hands each failure, sync or async, to onError', async () => {
    const errors: string[] = [];
    const hook = new Hook<[number]>((e) => errors.push((e as Error).message));
    const heard: number[] = [];
    hook.add(() => {
      throw new Error('sync');
    });
    hook.add(async () => {
      throw new Error('async');
    });
    hook.add((n) => void heard.push(n));
    hook.notify(7);
    expect(heard).toEqual([7]);
    await new Promise((r) => setImmediate(r));
    expect(errors).toEqual(['sync', 'async']);
  });

  it('is empty until a listener is added', () => {
    const hook = new Hook<[]>();
    expect(hook.empty).toBe(true);
    hook.add(() => undefined);
    expect(hook.empty).toBe(false);
  });
});
