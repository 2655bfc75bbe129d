"""Analyses after judging (notebook 10): cost (Table 5), the out-of-distribution study, and the
follow-ups on the judged paths (Tables 6-8, Figure 9); one module per job (CONTRIBUTING.md)."""
