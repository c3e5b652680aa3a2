"""snippets/common_mistakes.py: every WRONG block shows its symptom, every FIXED block the fix."""


import snippets.common_mistakes as mod
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "missing_import_wrong": ["NameError: name 'torch' is not defined"],
    "missing_import_fixed": ["shape: (2, 3)"],
    "half_mask_wrong": ["RuntimeError: value cannot be converted to type c10::Half without overflow"],
    "half_mask_fixed": [
        "torch.float16 finite: True weight on padding: 0.0 rows sum to 1: True",
        "torch.bfloat16 finite: True weight on padding: 0.0 rows sum to 1: True",
        "torch.float32 finite: True weight on padding: 0.0 rows sum to 1: True",
    ],
    "mask_convention_wrong": ["matches attention without the padded key: False", "max abs error: 2.528"],
    "mask_convention_fixed": ["matches attention without the padded key: True"],
    "batch_first_wrong": ["output shape: (2, 5, 16)", "sentence 0 unaffected by sentence 1: False"],
    "batch_first_fixed": ["output shape: (2, 5, 16)", "sentence 0 unaffected by sentence 1: True"],
    "mha_mask_shape_wrong": [
        "RuntimeError: The shape of the 3D attn_mask is torch.Size([2, 4, 4]), but should be (8, 4, 4).",
        "matches each sequence with its own mask: False",
    ],
    "mha_mask_shape_fixed": [
        "matches each sequence with its own mask: True",
        "(L, S) mask + key_padding_mask, same result: True",
    ],
    "view_transpose_wrong": [
        "shape looks right: (2, 4, 5, 3)",
        "head 0 holds head 0's features: False",
        "RuntimeError: view size is not compatible with input tensor's size and stride "
        "(at least one dimension spans across two contiguous subspaces)",
    ],
    "view_transpose_fixed": ["head 0 holds head 0's features: True", "merged heads line up with the input: True"],
    "softmax_dim_wrong": ["row sums: 1.069 0.907 1.126 0.898", "matches F.scaled_dot_product_attention: False"],
    "softmax_dim_fixed": ["row sums: 1.000 1.000 1.000 1.000", "matches F.scaled_dot_product_attention: True"],
    "missing_scale_wrong": [
        "largest weight per query: 1.000 0.929 0.998 0.840",
        "matches F.scaled_dot_product_attention: False",
    ],
    "missing_scale_fixed": [
        "largest weight per query: 0.578 0.397 0.539 0.378",
        "matches F.scaled_dot_product_attention: True",
    ],
    "eval_dropout_wrong": [
        "eval mode, two calls give the same output: False",
        "equals attention without dropout: False",
    ],
    "eval_dropout_fixed": [
        "eval mode, two calls give the same output: True",
        "equals attention without dropout: True",
    ],
    "fully_masked_wrong": ["output of query 0: [nan, nan, nan, nan]", "NaN in output: True"],
    "fully_masked_fixed": [
        "output of query 0: [0.0, 0.0, 0.0, 0.0]",
        "NaN in output: False",
        "matches F.scaled_dot_product_attention: True",
    ],
    "mha_fully_padded_wrong": [
        "need_weights=True, NaN in sequence 1: True",
        "loss: nan",
        "fast path, NaN in sequence 1: True",
    ],
    "mha_fully_padded_fixed": [
        "NaN anywhere: False",
        "empty sequence gives zeros: True",
        "sequence 0 unchanged: True",
        "fast path, NaN anywhere: False",
    ],
}



test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_every_wrong_block_prints_other_than_its_fix():
    for mistake in mod.MISTAKES:
        assert EXPECTED_OUTPUT[f"{mistake}_wrong"] != EXPECTED_OUTPUT[f"{mistake}_fixed"], mistake


# The PyTorch behaviour the FAQ states is asserted in tests/claims/, one test per claim id
# cited on the page ({{ claim:<id> }}).
