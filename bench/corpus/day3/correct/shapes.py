"""Shapes at real sizes: a student's own answer (bench corpus).

Forms: tuples, a dict of tuples built with dict(); an int.
"""


def q_vector_length(d_model, n_heads):
    return d_model // n_heads


def wq_shape_per_head(d_model, n_heads):
    return (d_model, q_vector_length(d_model, n_heads))


def wq_shape_layer(d_model, n_heads):
    return (d_model, d_model)


def wk_shape_layer(d_model, n_heads, n_kv_heads):
    return (d_model, n_kv_heads * q_vector_length(d_model, n_heads))


def attention_params_per_layer(d_model, n_heads, n_kv_heads):
    kv_width = wk_shape_layer(d_model, n_heads, n_kv_heads)[1]
    return 2 * d_model * d_model + 2 * d_model * kv_width


def prefill_shapes(n, d_model, n_heads):
    head = q_vector_length(d_model, n_heads)
    whole, one_head, table = (n, d_model), (n, head), (n, n)
    return dict(X=whole, Q=whole, Q_h=one_head, scores=table, weights=table,
                head_out=one_head, concat=whole, out=whole)


def decode_shapes(n_cached, d_model, n_heads):
    head = q_vector_length(d_model, n_heads)
    row, one_head, table = (1, d_model), (1, head), (1, n_cached + 1)
    return dict(x=row, q_h=one_head, scores=table, weights=table, head_out=one_head, out=row)
