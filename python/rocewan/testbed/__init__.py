"""The rocewan testbed: builds the WAN topology (rnic A <-> lossy-emu <-> rnic B)
in network namespaces, runs experiments, and reports tables, JSON and plots.

Entry point: ``./testbed`` at the repository root (see ``testbed --help``).
"""
