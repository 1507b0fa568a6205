"""Max-product messages of the logical factors AND and OR, as log-ratios (pmp App. C.3).

Every message is n = log m(1) − log m(0) of a binary variable; a factor's potential is 1 on the
states that satisfy it and 0 elsewhere. With the incoming messages n_j of its other variables,
the message to a variable is max over the satisfying states with that variable at 1, less the
same at 0, of Σ_j n_j x_j (the max-product update of pmp Alg. 1).

AND, b = t1 ∧ t2 (the only AND the deconvolution uses):

    to t1:  max(n_b + n_t2, 0) − max(n_t2, 0)          (t2 symmetrically)                  (1)
    to b:   min(n_t1 + n_t2, n_t1, n_t2)                                                    (2)

OR, b = t1 ∨ … ∨ tK, with R = Σ_j max(0, n_tj) and t* = argmax_j n_tj:

    to b:   R + min(0, n_t*)                                                                (3)
    to ti:  min(n_b + R − max(0, n_ti), max(0, −n_t'))    t' = argmax_{j≠i} n_tj            (4)

(4) needs only the two largest inputs: t' is the overall winner for every i but the winner, which
gets the runner-up (equal to the winner on a tie). With K = 1 there is no t' (the runner-up is
−inf) and (4) is n_b. All O(K) per factor, vectorised along one axis.

Inputs may be −inf ("forced off", e.g. a padded location) or very negative: no NaN arises, since
no expression adds +inf to −inf. They may not be +inf; use a large finite value (e.g. −OFF) for
"forced on". OFF is the finite "forced off" constant callers use where −inf would be inconvenient.
"""

from __future__ import annotations

from rbmlab.backend import namespace

# a log-ratio that forces a variable off, finite in float32 (our choice; the authors' code pads
# with −inf)
OFF = -1e9


def and_to_input(n_b, n_other):
    """(1): AND → one input, from the output's message n_b and the other input's n_other."""
    xp = namespace(n_b)
    return xp.maximum(n_b + n_other, 0.0) - xp.maximum(n_other, 0.0)


def and_to_output(n_t1, n_t2):
    """(2): AND → its output, from the two inputs' messages."""
    xp = namespace(n_t1)
    return xp.minimum(n_t1 + n_t2, xp.minimum(n_t1, n_t2))


def top2(n, axis: int = -1):
    """(largest, second largest) of ``n`` along ``axis`` (the axis dropped); on a tie for the
    largest both are that value; the second is −inf where the axis has one entry."""
    xp = namespace(n)
    first = n.max(axis=axis)
    winner = n == xp.expand_dims(first, axis)
    rest = xp.where(winner, -xp.inf, n).max(axis=axis)
    return first, xp.where(winner.sum(axis=axis) > 1, first, rest)


def merge_top2(first, second, other_first, other_second):
    """The (largest, second largest) of the union of two sets from each one's: the larger of
    the leaders, and the largest of the smaller leader and the two runners-up."""
    xp = namespace(first)
    return (
        xp.maximum(first, other_first),
        xp.maximum(xp.maximum(second, other_second), xp.minimum(first, other_first)),
    )


def or_statistics(n, axis: int = -1):
    """(R, largest, second largest) of the OR's input messages ``n`` along ``axis``: all that
    (3) and (4) need of the other inputs."""
    xp = namespace(n)
    first, second = top2(n, axis)
    return xp.maximum(n, 0.0).sum(axis=axis), first, second


def or_to_output(total, first):
    """(3): OR → its output, from R and the largest input message."""
    xp = namespace(total)
    return total + xp.minimum(first, 0.0)


def or_input_terms(n_b, total, first, second):
    """What (4) needs of one OR factor, formed once per factor: (n_b + R, the bound
    max(0, −n_t') when t' is the winner, and when t' is the runner-up)."""
    xp = namespace(total)
    return n_b + total, xp.maximum(-first, 0.0), xp.maximum(-second, 0.0)


def or_to_inputs(n, first, base, bound_first, bound_second):
    """(4): OR → each input, from its own message ``n`` and its factor's largest input message
    and :func:`or_input_terms`, all broadcast against ``n``."""
    xp = namespace(n)
    return xp.minimum(base - xp.maximum(n, 0.0), xp.where(n == first, bound_second, bound_first))


def or_messages(n, n_b, axis: int = -1):
    """(to the output (3), to every input (4)) of OR factors whose inputs' messages lie along
    ``axis`` of ``n`` and whose outputs' messages are ``n_b`` (``n`` without that axis)."""
    xp = namespace(n)
    total, first, second = or_statistics(n, axis)
    terms = [xp.expand_dims(t, axis) for t in or_input_terms(n_b, total, first, second)]
    return or_to_output(total, first), or_to_inputs(n, xp.expand_dims(first, axis), *terms)
