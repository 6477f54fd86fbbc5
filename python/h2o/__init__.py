"""h2o.cpp from Python, over its C interface (include/h2o/h2o.h) by ctypes:
no compiled extension and no dependencies.

    import h2o
    model = h2o.Model("models/stories260K.gguf")
    session = model.session(kv="h2o:heavy=32,recent=32")
    ids = session.generate(model.tokenize("Once upon a time"), max_tokens=40)
    print(model.detokenize(ids), session.kv_stats())

The shared library is found at $H2O_LIBRARY, else beside this package, else
by the system's search (after `cmake --install`), else in the source tree's
build/ (running from a clone with PYTHONPATH=python).
"""
import ctypes
import ctypes.util
import os

__all__ = ["Error", "Model", "Session", "library_path"]

_c_int32_p = ctypes.POINTER(ctypes.c_int32)


class _ModelParams(ctypes.Structure):
    _fields_ = [("n_threads", ctypes.c_int32), ("repack", ctypes.c_bool)]


class _SessionParams(ctypes.Structure):
    _fields_ = [("n_ctx", ctypes.c_int32), ("n_threads", ctypes.c_int32),
                ("max_chunk", ctypes.c_int32), ("kv", ctypes.c_char_p),
                ("prompt_len", ctypes.c_int64), ("kv_type_k", ctypes.c_char_p),
                ("kv_type_v", ctypes.c_char_p), ("kv_pos_shift", ctypes.c_bool)]


class _SamplerParams(ctypes.Structure):
    _fields_ = [("temperature", ctypes.c_float), ("top_k", ctypes.c_int32),
                ("top_p", ctypes.c_float), ("min_p", ctypes.c_float),
                ("repeat_penalty", ctypes.c_float), ("repeat_last_n", ctypes.c_int32),
                ("seed", ctypes.c_uint64)]


class _GenerateParams(ctypes.Structure):
    _fields_ = [("max_tokens", ctypes.c_int32), ("stop_at_eog", ctypes.c_bool),
                ("sampling", _SamplerParams)]


class _KvStats(ctypes.Structure):
    _fields_ = [("n_layer", ctypes.c_int32), ("n_head_kv", ctypes.c_int32),
                ("budget", ctypes.c_int32), ("tokens_kept", ctypes.c_int64),
                ("min_head_kept", ctypes.c_int32), ("max_head_kept", ctypes.c_int32),
                ("allocated_bytes", ctypes.c_size_t), ("full_cache_bytes", ctypes.c_size_t),
                ("policy", ctypes.c_char * 128)]


def library_path():
    """Where the shared library is loaded from."""
    if os.environ.get("H2O_LIBRARY"):
        return os.environ["H2O_LIBRARY"]
    here = os.path.dirname(os.path.abspath(__file__))
    beside = os.path.join(here, "libh2o.so")
    if os.path.exists(beside):
        return beside
    found = ctypes.util.find_library("h2o")
    if found:
        return found
    in_tree = os.path.join(here, "..", "..", "build", "src", "api", "libh2o.so")
    if os.path.exists(in_tree):
        return os.path.normpath(in_tree)
    raise OSError("libh2o.so not found: set H2O_LIBRARY, or build h2o.cpp (scripts/build.sh) "
                  "or install it (cmake --install build)")


def _load():
    lib = ctypes.CDLL(library_path())
    sig = {
        "h2o_last_error": (ctypes.c_char_p, []),
        "h2o_version": (ctypes.c_char_p, []),
        "h2o_model_default_params": (_ModelParams, []),
        "h2o_model_load": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_ModelParams),
                                          ctypes.POINTER(ctypes.c_void_p)]),
        "h2o_model_free": (None, [ctypes.c_void_p]),
        "h2o_model_n_vocab": (ctypes.c_int32, [ctypes.c_void_p]),
        "h2o_model_n_ctx_train": (ctypes.c_int32, [ctypes.c_void_p]),
        "h2o_model_arch": (ctypes.c_char_p, [ctypes.c_void_p]),
        "h2o_token_is_eog": (ctypes.c_bool, [ctypes.c_void_p, ctypes.c_int32]),
        "h2o_tokenize": (ctypes.c_int32, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                          _c_int32_p, ctypes.c_int32, ctypes.c_bool]),
        "h2o_detokenize": (ctypes.c_int32, [ctypes.c_void_p, _c_int32_p, ctypes.c_int32,
                                            ctypes.c_char_p, ctypes.c_int32, ctypes.c_bool]),
        "h2o_session_default_params": (_SessionParams, []),
        "h2o_session_create": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(_SessionParams),
                                              ctypes.POINTER(ctypes.c_void_p)]),
        "h2o_session_free": (None, [ctypes.c_void_p]),
        "h2o_session_eval": (ctypes.c_int, [ctypes.c_void_p, _c_int32_p, ctypes.c_int32,
                                            ctypes.c_bool]),
        "h2o_session_logits": (ctypes.POINTER(ctypes.c_float), [ctypes.c_void_p, ctypes.c_int32]),
        "h2o_session_n_past": (ctypes.c_int32, [ctypes.c_void_p]),
        "h2o_session_reset": (None, [ctypes.c_void_p]),
        "h2o_session_score": (ctypes.c_int, [ctypes.c_void_p, _c_int32_p, ctypes.c_int32,
                                             ctypes.POINTER(ctypes.c_double)]),
        "h2o_session_kv_stats": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(_KvStats)]),
        "h2o_generate_default_params": (_GenerateParams, []),
        "h2o_generate": (ctypes.c_int, [ctypes.c_void_p, _c_int32_p, ctypes.c_int32,
                                        ctypes.POINTER(_GenerateParams), _c_int32_p,
                                        ctypes.c_int32, _c_int32_p]),
    }
    for name, (restype, argtypes) in sig.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


_lib = _load()
__version__ = _lib.h2o_version().decode()

_INT32_MIN = -2 ** 31


class Error(RuntimeError):
    """A failed call: .code is the C interface's H2O_ERR_* value."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _check(code):
    if code != 0:
        raise Error(code, _lib.h2o_last_error().decode(errors="replace"))


def _ids(tokens):
    tokens = list(tokens)
    return (ctypes.c_int32 * len(tokens))(*tokens), len(tokens)


class Model:
    """A loaded GGUF model; immutable, shareable by threads."""

    def __init__(self, path, n_threads=0, repack=True):
        params = _lib.h2o_model_default_params()
        params.n_threads, params.repack = n_threads, repack
        handle = ctypes.c_void_p()
        _check(_lib.h2o_model_load(os.fsencode(path), ctypes.byref(params), ctypes.byref(handle)))
        self._handle = handle

    def __del__(self):
        if getattr(self, "_handle", None):
            _lib.h2o_model_free(self._handle)
            self._handle = None

    @property
    def n_vocab(self):
        return _lib.h2o_model_n_vocab(self._handle)

    @property
    def arch(self):
        return _lib.h2o_model_arch(self._handle).decode()

    def tokenize(self, text, add_special=True):
        data = text.encode() if isinstance(text, str) else bytes(text)
        size = len(data) + 2
        while True:
            out = (ctypes.c_int32 * size)()
            n = _lib.h2o_tokenize(self._handle, data, len(data), out, size, add_special)
            if n == _INT32_MIN:
                _check(-1)
            if n >= 0:
                return list(out[:n])
            size = -n

    def detokenize(self, ids, remove_special=True):
        arr, n = _ids(ids)
        size = 8 * n + 1
        while True:
            buf = ctypes.create_string_buffer(size)
            got = _lib.h2o_detokenize(self._handle, arr, n, buf, size, remove_special)
            if got == _INT32_MIN:
                _check(-1)
            if got >= 0:
                return buf.raw[:got].decode(errors="replace")
            size = -got

    def is_end_of_generation(self, token):
        return _lib.h2o_token_is_eog(self._handle, token)

    def session(self, **params):
        return Session(self, **params)


class Session:
    """One sequence and its KV cache under a policy (the CLI's --kv)."""

    def __init__(self, model, kv="full", n_ctx=0, n_threads=0, max_chunk=0, prompt_len=0,
                 kv_type_k=None, kv_type_v=None, kv_pos_shift=False):
        p = _lib.h2o_session_default_params()
        p.n_ctx, p.n_threads, p.max_chunk, p.prompt_len = n_ctx, n_threads, max_chunk, prompt_len
        p.kv = kv.encode()
        p.kv_type_k = kv_type_k.encode() if kv_type_k else None
        p.kv_type_v = kv_type_v.encode() if kv_type_v else None
        p.kv_pos_shift = kv_pos_shift
        handle = ctypes.c_void_p()
        _check(_lib.h2o_session_create(model._handle, ctypes.byref(p), ctypes.byref(handle)))
        self._model = model  # a model outlives its sessions
        self._handle = handle

    def __del__(self):
        if getattr(self, "_handle", None):
            _lib.h2o_session_free(self._handle)
            self._handle = None

    @property
    def n_past(self):
        return _lib.h2o_session_n_past(self._handle)

    def reset(self):
        _lib.h2o_session_reset(self._handle)

    def eval(self, tokens):
        arr, n = _ids(tokens)
        _check(_lib.h2o_session_eval(self._handle, arr, n, False))

    def logits(self):
        """The last fed token's logits, as a list of floats."""
        row = _lib.h2o_session_logits(self._handle, -1)
        if not row:
            raise Error(-1, "no logits yet: eval first")
        return row[:self._model.n_vocab]

    def score(self, tokens):
        """Each token's negative log-likelihood given those before it
        (len(tokens) - 1 values), fed after what the session holds."""
        arr, n = _ids(tokens)
        nll = (ctypes.c_double * max(n - 1, 1))()
        _check(_lib.h2o_session_score(self._handle, arr, n, nll))
        return list(nll[:n - 1])

    def generate(self, prompt, max_tokens=128, temperature=0.0, top_k=40, top_p=0.95,
                 min_p=0.0, repeat_penalty=1.0, seed=0, stop_at_eog=True):
        """Resets, feeds the prompt, returns the generated ids (greedy by default)."""
        p = _lib.h2o_generate_default_params()
        p.max_tokens, p.stop_at_eog = max_tokens, stop_at_eog
        s = p.sampling
        s.temperature, s.top_k, s.top_p, s.min_p = temperature, top_k, top_p, min_p
        s.repeat_penalty, s.seed = repeat_penalty, seed
        arr, n = _ids(prompt)
        out = (ctypes.c_int32 * max(max_tokens, 1))()
        n_out = ctypes.c_int32()
        _check(_lib.h2o_generate(self._handle, arr, n, ctypes.byref(p), out, max_tokens,
                                 ctypes.byref(n_out)))
        return list(out[:n_out.value])

    def kv_stats(self):
        st = _KvStats()
        _check(_lib.h2o_session_kv_stats(self._handle, ctypes.byref(st)))
        out = {name: getattr(st, name) for name, _ in _KvStats._fields_}
        out["policy"] = st.policy.decode()
        return out
