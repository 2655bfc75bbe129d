"""SAGE's statistics (notebooks 05-06): reading the evaluations, reliability, genre comparison,
independence of L1-L3 from L4-L6, and the paper's Tables 8-11 and Figures 2-4."""
