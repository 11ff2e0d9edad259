"""GradBench ``lstm``: the ADBench LSTM (diagonal weights), loss and gradient.

``l`` layers of ``b`` cells each run over a sequence of ``c`` characters,
each encoded as ``b`` bits; the loss is the negative mean log-likelihood of
the next character's bits. ``main_params`` holds, per layer, a weight row and
a bias row of ``4 b`` entries (forget, input, output gates and the change);
``extra_params`` the input weight, output weight and output bias. The
gradient is ``wg.grad`` of the loss, reverse mode through the time loop.
"""
from __future__ import annotations

import numpy as np

import wengert as wg

from ..common import Function, ad_options, compiled


# --- the objective, as a NumPy user writes it --------------------------------
def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_cell(weight, bias, hidden, cell, x):
    """One layer, one step. Each cell's gates see one input each: the
    layer's input for the forget and output gates, the hidden state for the
    input gate and the change."""
    b = hidden.shape[0]
    gates = np.concatenate([x, hidden, x, hidden]) * weight + bias
    sig = sigmoid(gates[0:3 * b])
    forget = sig[0:b]
    ingate = sig[b:2 * b]
    outgate = sig[2 * b:3 * b]
    change = np.tanh(gates[3 * b:4 * b])
    cell = cell * forget + ingate * change
    hidden = outgate * np.tanh(cell)
    return hidden, cell


def predict(weights, biases, extra, hidden, cell, x):
    """All layers, one step: (output, new hidden states, new cell states),
    the states one row per layer; ``extra`` is (input weight, output weight,
    output bias)."""
    x = x * extra[0]
    new_hidden = []
    new_cell = []
    for i in range(len(weights)):
        h, c = lstm_cell(weights[i], biases[i], hidden[i], cell[i], x)
        new_hidden.append(h)
        new_cell.append(c)
        x = h
    return x * extra[1] + extra[2], np.stack(new_hidden), np.stack(new_cell)


def loss(main_params, extra_params, state, sequence):
    """Negative mean log-likelihood of each next character's bits."""
    n_layers = state.shape[0] // 2
    # the parameter rows are taken once, before the time loop: indexing them at
    # every step would cost a scatter per row and step in the reverse pass
    weights = [main_params[2 * i] for i in range(n_layers)]
    biases = [main_params[2 * i + 1] for i in range(n_layers)]
    extra = [extra_params[0], extra_params[1], extra_params[2]]
    hidden = state[0::2]
    cell = state[1::2]
    total = 0.0
    for t in range(sequence.shape[0] - 1):
        ypred, hidden, cell = predict(weights, biases, extra, hidden, cell, sequence[t])
        # ADBench's normaliser: log(2 + sum(exp(ypred)))
        ynorm = ypred - np.log(2.0 + np.sum(np.exp(ypred)))
        total = total + np.sum(sequence[t + 1] * ynorm)
    return -total / ((sequence.shape[0] - 1) * sequence.shape[1])


# --- GradBench glue ----------------------------------------------------------
def prepare(input):
    return tuple(np.asarray(input[k], float)
                 for k in ("main_params", "extra_params", "state", "sequence"))


def functions(engine="auto", backend="python"):
    ad = ad_options(engine, backend)
    gradient = wg.grad(loss, argnums=(0, 1), **ad)

    def run_jacobian(main_params, extra_params, state, sequence):
        g_main, g_extra = gradient(main_params, extra_params, state, sequence)
        return np.concatenate([g_main.reshape(-1), g_extra.reshape(-1)])

    return {"objective": Function(prepare, compiled(loss, backend), float),
            "jacobian": Function(prepare, run_jacobian, lambda g: g.tolist())}


def make_input(l=2, c=1024, b=14, seed=0):
    """GradBench's input at ``l`` layers and ``c`` characters (the eval's
    smallest default case; its text has 14-bit characters): random
    parameters and state in [0, 1), and a random bit sequence in place of
    the text."""
    rng = np.random.default_rng(seed)
    return {"main_params": rng.random((2 * l, 4 * b)).tolist(),
            "extra_params": rng.random((3, b)).tolist(),
            "state": rng.random((2 * l, b)).tolist(),
            "sequence": rng.integers(0, 2, size=(c, b)).astype(float).tolist()}
