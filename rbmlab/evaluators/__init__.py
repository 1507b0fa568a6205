"""Model evaluation: exact log-likelihood for small RBMs, annealed importance sampling (forward
and reverse) for large ones, pseudo-likelihood and reconstruction error."""
