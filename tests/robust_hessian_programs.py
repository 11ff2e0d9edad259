"""Programs of the fuzzer (``fuzz_programs``, seeds 124, 190, 328, 334 before issue
11) whose Hessian in ``v`` once crashed inside wengert (a reshape of a length
known only at run time to 0). ``frontends/source/test_loops.py`` checks each: the fuzzer's
module header (``C`` per program), then the program's ``f``."""

HEADER = '''\
import numpy as np

G = np.array([0.3, 0.7, 1.1, 1.5])
C = {C}
RS = np.random.RandomState(0)


def h(a, b):
    if a > b:
        return np.sin(a) * C + b
    return a * b * 0.5 + G[0]


'''

_F = {
    124: (1.3, '''\
def f(x, v):
    s = x * 0.5
    t = np.sum(v) * 0.25
    u = 1.0
    for i in range(4):
        if G @ (G) > float(np.sum(RS.randn(2))):
            u = (np.arctan(t)) * (v[0])
        if np.max(G) > np.max(v * (0.7)):
            s *= float(np.sum(RS.randn(2)))
            w0 = 1.0
        else:
            u = v[1]
            w0 = x
        if np.max(G) > float(np.sum(RS.randn(2))):
            break
    u = u
    t += h(u, u)
    if np.minimum((v[3]), 0.7) > h(u, v[0]):
        if t - s > 1.0:
            t = u
        else:
            s = np.minimum((abs((v[2]))), (np.maximum(u, (v[3]))))
            t = (-(1.5)) + (0.5 - s)
        w1 = v[3]
    else:
        if u > np.maximum(u, (v[3])):
            return u / (1.0 + (h(0.7, v[3])) * (h(0.7, v[3])))
        u += np.max(v * (s))
        w1 = u
    s = s + v[1]
    n1 = 0
    while np.exp(np.tanh(w1)) < 2.0 and n1 < 4:
        n1 = n1 + 1
        if np.cos(u) > 0.7:
            v[2] *= w1
        elif 0.7 > RS.rand():
            u = np.max(v)
        else:
            u = x
            v = np.tanh(v) * 1.0
        t = RS.rand()
    return u
'''),
    190: (0.7, '''\
def f(x, v):
    s = x * 0.5
    t = np.sum(v) * 0.25
    u = 1.0
    if 1.0 > v[2]:
        if C > 0.5:
            v[0] = np.sum(v * (x))
            u += np.maximum((v[2]), 0.5)
            w1 = v[2]
        elif C > 0.5:
            s = s + abs(x)
            w1 = np.mean(v)
        else:
            v[2] += np.mean(G)
            w1 = np.where(t > (v[1]), t, 0.5 * (v[1]))
        w0 = np.where(w1 > (v[0]), w1, 0.5 * (v[0]))
    else:
        s = s + np.minimum(u, s)
        w0 = t
    if u * u > np.sin(s):
        s = s + v[2]
        n2 = 0
        while np.where(x > u, x, 0.5 * u) < 2.0 and n2 < 1:
            n2 = n2 + 1
            v[2] *= v[3]
    if h(u, s) > C - x:
        return float(np.sum(RS.randn(2)))
    return ((v[1]) * t) + (v[3])
'''),
    328: (0.7, '''\
def f(x, v):
    s = x * 0.5
    t = np.sum(v) * 0.25
    u = 1.0
    if v[2] > G @ (v * (C)):
        return np.maximum((1.0 / (1.0 + 2.0 * 2.0)), 2.0)
    for i in range(2):
        u = G @ (np.sin(v * (s)))
        if C > 0.5:
            break
        if C > 0.5:
            v = v * (0.7 + (v[i])) * 1.0
            if 1.5 + 1.5 > C and s < 3.0:
                continue
        elif RS.randn() > np.max(v):
            v[i] += np.arctan(2.0)
    t = np.maximum((x * t), (np.cos(u)))
    return np.max(v * (s))
'''),
    334: (1.3, '''\
def f(x, v):
    s = x * 0.5
    t = np.sum(v) * 0.25
    u = 1.0
    s = s + s
    if v[1] > v[0]:
        t = u
        w0 = x
    else:
        for i in range(3):
            v[i] = np.minimum(u, 1.0)
            u = x
            if np.mean(v) > h(s, t):
                break
        if C > 0.5:
            u += np.exp(np.tanh(s))
            v = G * 1.0
        elif C > 1.0:
            v = (v + 0.1 * RS.randn(4)) * 1.0
        else:
            s = x
        w0 = 2.0
    if ((v[3])) ** 2 > s:
        return ((v[3])) ** 2
    s = s + (t) ** 2
    t = u
    return np.mean(v * (s))
'''),
}

PROGRAMS = {seed: HEADER.replace("{C}", repr(c)) + f for seed, (c, f) in _F.items()}
