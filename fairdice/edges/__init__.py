"""Edges: the code of `fairdice` that touches the world (environment, files, locks, processes).

The core (`fairdice.game`, `fairdice.rules`, `fairdice.bots`, ...) imports nothing from here; an edge
installs what the core needs from outside, such as the optimal policy's table source."""
