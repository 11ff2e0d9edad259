import time, numpy as np, wengert as wg
def f(x): return np.prod(x, axis=1).sum()
x = np.random.default_rng(0).uniform(0.9, 1.1, (1000, 1000))
def cpu(fn, n=40):
    fn(x); t = time.process_time()
    for _ in range(n): fn(x)
    return (time.process_time() - t) / n
for e in ("source", "trace"):
    g = wg.grad(f, engine=e)
    tf, tg = cpu(f), cpu(g)
    print(e, f"f {tf*1e3:.2f} ms  grad {tg*1e3:.2f} ms  ratio {tg/tf:.1f}  (CPU time)")
