"""Values reported in the Narrative Trails LLM-judge paper, as cited constants.

Source: Keith 2025, *Electronics* 14(13):2735, doi:10.3390/electronics14132735 (judge GPT-4.1,
K = 5 agents for news, 3 for VisPub). They appear only in ``paper_*`` columns beside the
recomputed values; nothing is computed from them.
"""
from __future__ import annotations

# --- LLM judge results (notebook 09) -------------------------------------------------------

PAPER_TABLE2_PEARSON: dict[tuple[str, str], dict[str, float]] = {
    # Table 2: Pearson r between the mean LLM score and min / average path coherence
    # (n = 400 news narratives, 200 VisPub; "all values significant with p < 0.001").
    ("news", "simple"): {"pearson_min": 0.40, "pearson_avg": 0.41},
    ("news", "cot"): {"pearson_min": 0.46, "pearson_avg": 0.38},
    ("news", "standard"): {"pearson_min": 0.36, "pearson_avg": 0.39},
    ("news", "complex"): {"pearson_min": 0.34, "pearson_avg": 0.38},
    ("vispub", "simple"): {"pearson_min": 0.56, "pearson_avg": 0.61},
    ("vispub", "cot"): {"pearson_min": 0.63, "pearson_avg": 0.58},
    ("vispub", "standard"): {"pearson_min": 0.57, "pearson_avg": 0.62},
    ("vispub", "complex"): {"pearson_min": 0.62, "pearson_avg": 0.65},
}

PAPER_TABLE3_AGREEMENT: dict[tuple[str, str], dict[str, float]] = {
    # Table 3: inter-rater reliability across modes (the paper reports no CoT column).
    # Agreement shares as fractions (81.2% -> 0.812).
    ("news", "simple"): {"icc2_1": 0.961, "icc2_k": 0.992, "krippendorff_alpha": 0.961, "kendalls_w": 0.912,
                         "mean_abs_dev": 0.150, "exact_agreement": 0.812, "within1_agreement": 0.998},
    ("news", "standard"): {"icc2_1": 0.924, "icc2_k": 0.984, "krippendorff_alpha": 0.924, "kendalls_w": 0.799,
                           "mean_abs_dev": 0.119, "exact_agreement": 0.612, "within1_agreement": 1.000},
    ("news", "complex"): {"icc2_1": 0.952, "icc2_k": 0.990, "krippendorff_alpha": 0.952, "kendalls_w": 0.816,
                          "mean_abs_dev": 0.183, "exact_agreement": 0.256, "within1_agreement": 0.986},
    ("vispub", "simple"): {"icc2_1": 0.963, "icc2_k": 0.987, "krippendorff_alpha": 0.962, "kendalls_w": 0.925,
                           "mean_abs_dev": 0.126, "exact_agreement": 0.812, "within1_agreement": 0.998},
    ("vispub", "standard"): {"icc2_1": 0.924, "icc2_k": 0.973, "krippendorff_alpha": 0.924, "kendalls_w": 0.841,
                             "mean_abs_dev": 0.089, "exact_agreement": 0.582, "within1_agreement": 1.000},
    ("vispub", "complex"): {"icc2_1": 0.963, "icc2_k": 0.987, "krippendorff_alpha": 0.963, "kendalls_w": 0.863,
                            "mean_abs_dev": 0.134, "exact_agreement": 0.297, "within1_agreement": 0.995},
}

PAPER_TABLE4_LLM: dict[tuple[str, str], dict[str, float]] = {
    # Table 4, LLM rows: Cohen's d ("d") and AUC-ROC ("auc"), max-capacity vs random paths
    # (column names as in notebook 08's mathematical rows, math_paper_values.PAPER_TABLE4_MATH).
    ("news", "simple"): {"d": 0.568, "auc": 0.660},
    ("news", "cot"): {"d": 0.345, "auc": 0.594},
    ("news", "standard"): {"d": 0.566, "auc": 0.650},
    ("news", "complex"): {"d": 0.582, "auc": 0.663},
    ("vispub", "simple"): {"d": 1.183, "auc": 0.795},
    ("vispub", "cot"): {"d": 1.083, "auc": 0.777},
    ("vispub", "standard"): {"d": 1.188, "auc": 0.798},
    ("vispub", "complex"): {"d": 1.316, "auc": 0.823},
}

PAPER_TABLE8_DISAGREEMENT: dict[tuple[str, str], dict[str, float]] = {
    # Table 8: mean SD across the K agents and coefficient of variation (Figure 8 g).
    ("news", "simple"): {"mean_sd": 0.171, "mean_cov": 0.025},
    ("news", "cot"): {"mean_sd": 0.271, "mean_cov": 0.035},
    ("news", "standard"): {"mean_sd": 0.138, "mean_cov": 0.023},
    ("news", "complex"): {"mean_sd": 0.215, "mean_cov": 0.036},
    ("vispub", "simple"): {"mean_sd": 0.134, "mean_cov": 0.024},
    ("vispub", "cot"): {"mean_sd": 0.233, "mean_cov": 0.036},
    ("vispub", "standard"): {"mean_sd": 0.096, "mean_cov": 0.018},
    ("vispub", "complex"): {"mean_sd": 0.146, "mean_cov": 0.028},
}

# --- Cost, OOD and follow-up analyses (notebook 10) ------------------------------------------

PAPER_TABLE5_COST: dict[str, dict[str, float]] = {
    # Table 5 (VisPub, n = 60 narratives, K = 1): time per narrative (s) and input tokens per
    # narrative (tiktoken; prompt + titles as a numbered list; "input tokens only"), mean and SD.
    "simple": {"time_s_mean": 0.647, "time_s_sd": 0.082, "tokens_mean": 123.0, "tokens_sd": 53.9},
    "cot": {"time_s_mean": 6.001, "time_s_sd": 0.109, "tokens_mean": 279.0, "tokens_sd": 53.9},
    "standard": {"time_s_mean": 0.867, "time_s_sd": 0.016, "tokens_mean": 214.0, "tokens_sd": 53.9},
    "complex": {"time_s_mean": 1.034, "time_s_sd": 0.114, "tokens_mean": 225.0, "tokens_sd": 53.9},
}
PAPER_COST_SAMPLE: dict[str, float] = {
    # Section 5.6: the cost sample (60 narratives from 30 VisPub endpoint pairs, K = 1) had
    # 5.6 +- 3.4 documents per narrative.
    "n_narratives": 60, "documents_mean": 5.6, "documents_sd": 3.4,
}

PAPER_OOD: dict[str, dict[str, float]] = {
    # Section 5.7: 30 alternating and 30 random mixed narratives (news + VisPub); mean +- SD of
    # the LLM score and of the mathematical coherence (the paper does not say which coherence
    # statistic; its values sit on the minimum-coherence scale).
    "alternating": {"n": 30, "score_mean": 1.99, "score_sd": 0.35, "coherence_mean": 0.303, "coherence_sd": 0.009},
    "random_mixed": {"n": 30, "score_mean": 2.41, "score_sd": 0.69, "coherence_mean": 0.337, "coherence_sd": 0.108},
}
PAPER_OOD_CORRELATION: dict[str, float] = {"r": 0.729, "p_below": 0.0001}
"""Section 5.7: Pearson r between coherence and LLM score over the 60 OOD narratives (p < 0.0001)."""
PAPER_OOD_TEST: dict[str, float] = {"t": -2.93, "p": 0.0048, "d": -0.77}
"""Section 5.7: alternating vs random mixed LLM scores (t, p, Cohen's d)."""

PAPER_TABLE6_R2: dict[tuple[str, str, str], dict[str, float]] = {
    # Table 6: R^2 (mean, SD over CV folds) predicting LLM scores from coherence metrics.
    # Keys (collection, mode, model).
    **{("news", m, "linear"): {"r2_mean": a, "r2_sd": b} for m, a, b in
       [("simple", 0.188, 0.034), ("cot", 0.188, 0.071), ("standard", 0.188, 0.049), ("complex", 0.208, 0.062)]},
    **{("vispub", m, "linear"): {"r2_mean": a, "r2_sd": b} for m, a, b in
       [("simple", 0.327, 0.101), ("cot", 0.356, 0.085), ("standard", 0.348, 0.115), ("complex", 0.421, 0.100)]},
    **{("news", m, "ridge"): {"r2_mean": a, "r2_sd": b} for m, a, b in
       [("simple", 0.186, 0.032), ("cot", 0.176, 0.066), ("standard", 0.187, 0.051), ("complex", 0.206, 0.065)]},
    **{("vispub", m, "ridge"): {"r2_mean": a, "r2_sd": b} for m, a, b in
       [("simple", 0.328, 0.089), ("cot", 0.358, 0.080), ("standard", 0.350, 0.101), ("complex", 0.420, 0.096)]},
    **{("news", m, "random_forest"): {"r2_mean": a, "r2_sd": b} for m, a, b in
       [("simple", 0.332, 0.115), ("cot", 0.315, 0.075), ("standard", 0.350, 0.110), ("complex", 0.290, 0.121)]},
    **{("vispub", m, "random_forest"): {"r2_mean": a, "r2_sd": b} for m, a, b in
       [("simple", 0.406, 0.147), ("cot", 0.410, 0.149), ("standard", 0.393, 0.121), ("complex", 0.554, 0.078)]},
    **{("news", m, "polynomial"): {"r2_mean": a, "r2_sd": b} for m, a, b in
       [("simple", 0.166, 0.059), ("cot", 0.168, 0.050), ("standard", 0.164, 0.075), ("complex", 0.184, 0.089)]},
    **{("vispub", m, "polynomial"): {"r2_mean": a, "r2_sd": b} for m, a, b in
       [("simple", 0.277, 0.128), ("cot", 0.328, 0.083), ("standard", 0.312, 0.117), ("complex", 0.398, 0.087)]},
}

PAPER_TABLE7_IMPORTANCE: dict[tuple[str, str], dict[str, float]] = {
    # Table 7: random-forest feature importances (min coherence, avg coherence, path length).
    ("news", "simple"): {"min_coherence": 0.602, "mean_coherence": 0.315, "length": 0.083},
    ("news", "cot"): {"min_coherence": 0.636, "mean_coherence": 0.282, "length": 0.082},
    ("news", "standard"): {"min_coherence": 0.542, "mean_coherence": 0.340, "length": 0.117},
    ("news", "complex"): {"min_coherence": 0.469, "mean_coherence": 0.402, "length": 0.129},
    ("vispub", "simple"): {"min_coherence": 0.312, "mean_coherence": 0.562, "length": 0.127},
    ("vispub", "cot"): {"min_coherence": 0.517, "mean_coherence": 0.373, "length": 0.110},
    ("vispub", "standard"): {"min_coherence": 0.268, "mean_coherence": 0.621, "length": 0.111},
    ("vispub", "complex"): {"min_coherence": 0.366, "mean_coherence": 0.526, "length": 0.108},
}

PAPER_TEMPORAL: dict[str, dict[str, float]] = {
    # Section 5.8.3: VisPub spans (years) correlate slightly negatively with coherence scores,
    # r = -0.08 to -0.14; news shows no significant temporal effect (no values given).
    "vispub": {"r_min": -0.14, "r_max": -0.08},
}
PAPER_COMPLEXITY: dict[str, dict[str, float]] = {
    # Section 5.8.4: correlations with LLM scores (collections pooled in the text).
    "coherence_var": {"r_min": -0.30, "r_max": -0.22},
    "weak_link_ratio": {"r_min": -0.30, "r_max": -0.30},
}
PAPER_CV_STABILITY: dict[str, float] = {
    # Section 5.9: |r_train - r_test| < 0.05 on average; SD of Cohen's d over folds < 0.2.
    "mean_abs_diff_below": 0.05, "d_sd_below": 0.2,
}
