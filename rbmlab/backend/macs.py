"""Multiply-adds (MACs) of the dense linear algebra a training step does: the machine-independent
cost unit of ``step_cost`` (rbmlab.learners.base). A product (m, k) · (k, n) is m·k·n MACs; a
factorisation, which no matmul counter sees, is declared by its textbook operation count
(Golub & Van Loan, flops / 2), so learners that use one are charged in the same unit.
Elementwise work (sampling, nonlinearities, damping) is not counted.
"""

from __future__ import annotations


def lu_solve(n: int, rhs: int = 1) -> float:
    """Solving an (n, n) system for ``rhs`` right-hand sides: LU, Σ_{k<n} k² = (n−1)n(2n−1)/6,
    then a forward and a back substitution per right-hand side, n(n−1)."""
    return (n - 1) * n * (2 * n - 1) / 6 + rhs * n * (n - 1)


def inverse(n: int) -> float:
    """Inverting an (n, n) matrix: 2n³ flops, n³ MACs."""
    return float(n**3)


def eigh(n: int) -> float:
    """Symmetric eigendecomposition with eigenvectors (tridiagonal QR): 9n³ flops, 4.5 n³ MACs."""
    return 4.5 * n**3


def eigvalsh(n: int) -> float:
    """Symmetric eigenvalues only (the reduction to tridiagonal form): 4n³/3 flops, 2n³/3 MACs."""
    return 2 * n**3 / 3
