"""Adapters that both the `fairdice` command (`fairdice.edges`) and the server (`api`) use.

They touch the world (the optimal tables' file cache reads the environment, files and locks; the argparse
types read command lines), so they are not core; and both front ends need them, so they live in neither.
The arrows run one way (tests/test_layers.py holds them):

    fairdice.edges ──▶ fairdice.adapters ──▶ fairdice (the pure core)
    api            ──▶ fairdice.adapters ──▶ fairdice

An adapter imports the core and nothing of `fairdice.edges` or `api`; the core imports nothing of here,
and is handed what it needs from outside (the optimal policy's table source) as an argument."""
