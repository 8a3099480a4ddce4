"""Reference: the shapes of one attention layer, from the model's sizes."""


def q_vector_length(d_model, n_heads):
    return d_model // n_heads


def wq_shape_per_head(d_model, n_heads):
    return (d_model, d_model // n_heads)


def wq_shape_layer(d_model, n_heads):
    return (d_model, d_model)


def wk_shape_layer(d_model, n_heads, n_kv_heads):
    return (d_model, n_kv_heads * (d_model // n_heads))


def attention_params_per_layer(d_model, n_heads, n_kv_heads):
    kv_width = n_kv_heads * (d_model // n_heads)
    return 2 * d_model * d_model + 2 * d_model * kv_width


def prefill_shapes(n, d_model, n_heads):
    d_head = d_model // n_heads
    return {"X": (n, d_model), "Q": (n, d_model), "Q_h": (n, d_head), "scores": (n, n),
            "weights": (n, n), "head_out": (n, d_head), "concat": (n, d_model),
            "out": (n, d_model)}


def decode_shapes(n_cached, d_model, n_heads):
    d_head = d_model // n_heads
    seen = n_cached + 1
    return {"x": (1, d_model), "q_h": (1, d_head), "scores": (1, seen), "weights": (1, seen),
            "head_out": (1, d_head), "out": (1, d_model)}


# ---- known wrong versions

def q_vector_length_as_matrix(d_model, n_heads):
    return (d_model // n_heads, d_model // n_heads)


def attention_params_times_heads(d_model, n_heads, n_kv_heads):
    return n_heads * attention_params_per_layer(d_model, n_heads, n_kv_heads)


def attention_params_fewer_q_heads(d_model, n_heads, n_kv_heads):
    kv_width = n_kv_heads * (d_model // n_heads)
    return d_model * kv_width * 3 + d_model * d_model


def wk_shape_query_heads(d_model, n_heads, n_kv_heads):
    return (d_model, d_model)


def decode_shapes_without_self(n_cached, d_model, n_heads):
    shapes = decode_shapes(n_cached, d_model, n_heads)
    return {**shapes, "scores": (1, n_cached), "weights": (1, n_cached)}
