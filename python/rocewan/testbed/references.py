"""Short citations of the papers the testbed reproduces, as printed in tables, plots
and help. The full references are in docs/references.md."""

WANG = "Wang, NJUPT"                # Go-Back-N goodput model (section IV.A), Go-Back-ONE
WANG_BY = "Wang (NJUPT)"            # the same, as the subject of a sentence
SWING = "Chen et al., TPDS 2023"    # Swing: PFC-Relay
DCQCNP = "Wang et al., J. HFUT 2025"  # DCQCN-p: "Design of efficient congestion control method based on RDMA"
VRP = "Denis, LIP RR-2000-11"      # Variable Reliability Protocol
VRP_BY = "Denis (VRP, LIP RR-2000-11)"  # the same, as the subject of a sentence
