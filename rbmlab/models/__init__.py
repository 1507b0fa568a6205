"""Model definitions: parameters, energies and conditionals."""
