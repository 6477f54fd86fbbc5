#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/<target>/ (run from anywhere).

Seeds are small on purpose: the fuzzer grows them, and CI copies them. The
GGUF seeds are hand-encoded here (little-endian, GGUF v3 unless noted), not
written by gguf::Writer, so they do not share its assumptions.
"""
import os
import struct

ROOT = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(ROOT)


def write(target, name, data):
    d = os.path.join(ROOT, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---- GGUF ----------------------------------------------------------------
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
          BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}


def gstr(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def gval(t, v):
    if t == STR:
        return gstr(v)
    if t == ARR:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(gval(et, i) for i in items)
    return struct.pack(SCALAR[t], v)


def gguf(kvs, tensors=(), version=3, alignment=32):
    """kvs: [(key, type, value)]; tensors: [(name, dims, ggml_type, data bytes)]."""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    for k, t, v in kvs:
        out += gstr(k) + struct.pack("<I", t) + gval(t, v)
    offset, blobs = 0, b""
    for name, dims, ggml_type, data in tensors:
        out += gstr(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", ggml_type, offset)
        pad = (-len(data)) % alignment
        blobs += data + b"\0" * pad
        offset += len(data) + pad
    out += b"\0" * ((-len(out)) % alignment)
    return out + blobs


F32_T, F16_T, Q8_0_T = 0, 1, 8
write("fuzz_gguf", "empty_v3", gguf([]))
write("fuzz_gguf", "empty_v2", gguf([], version=2))
write("fuzz_gguf", "every_type", gguf(
    [("general.architecture", STR, "llama"), ("u8", U8, 7), ("i8", I8, -7), ("u16", U16, 700),
     ("i16", I16, -700), ("u32", U32, 70000), ("i32", I32, -70000), ("f32", F32, 1.5),
     ("bool", BOOL, True), ("u64", U64, 1 << 40), ("i64", I64, -(1 << 40)), ("f64", F64, 2.5),
     ("arr.i32", ARR, (I32, [1, -2, 3])), ("arr.str", ARR, (STR, ["a", "", "c"])),
     ("arr.arr", ARR, (ARR, [(U8, [1, 2]), (U8, [])])),
     ("general.alignment", U32, 32)],
    [("a.weight", [4, 2], F32_T, struct.pack("<8f", *range(8))),
     ("b.weight", [4], F16_T, b"\0\x3c" * 4),
     ("q.weight", [32], Q8_0_T, struct.pack("<e", 0.5) + bytes(range(32)))]))
write("fuzz_gguf", "alignment_64", gguf(
    [("general.alignment", U32, 64)], [("t", [3], F32_T, struct.pack("<3f", 1, 2, 3))],
    alignment=64))

# A SentencePiece vocabulary: <unk> <s> </s>, the 256 byte tokens, pieces.
spm_pieces = ["\u2581", "\u2581a", "ab", "\u2581ab", "b", "a", "<|user|>"]
spm_tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + spm_pieces
spm_types = [2, 3, 3] + [6] * 256 + [1] * (len(spm_pieces) - 1) + [4]
write("fuzz_gguf", "vocab_llama", gguf(
    [("tokenizer.ggml.model", STR, "llama"), ("tokenizer.ggml.tokens", ARR, (STR, spm_tokens)),
     ("tokenizer.ggml.scores", ARR, (F32, [0.0] * 259 + [-float(i) for i in range(7)])),
     ("tokenizer.ggml.token_type", ARR, (I32, spm_types)),
     ("tokenizer.ggml.bos_token_id", U32, 1), ("tokenizer.ggml.eos_token_id", U32, 2),
     ("tokenizer.chat_template", STR, "{{ '<|user|>' + message['content'] }}")]))

# A byte-level BPE vocabulary: the 256 byte symbols as GPT-2 spells them,
# a few merges, and special tokens.
def gpt2_byte_symbols():
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    n, out = 0, {}
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + n)
            n += 1
    return [out[b] for b in range(256)]


bpe_tokens = gpt2_byte_symbols() + ["he", "ll", "hell", "hello", "\u0120w", "<|begin_of_text|>",
                                    "<|eot_id|>"]
bpe_types = [1] * (len(bpe_tokens) - 2) + [3, 3]
for pre in ("llama-bpe", "gpt2"):
    write("fuzz_gguf", "vocab_gpt2_" + pre, gguf(
        [("tokenizer.ggml.model", STR, "gpt2"), ("tokenizer.ggml.pre", STR, pre),
         ("tokenizer.ggml.tokens", ARR, (STR, bpe_tokens)),
         ("tokenizer.ggml.token_type", ARR, (I32, bpe_types)),
         ("tokenizer.ggml.merges", ARR, (STR, ["h e", "l l", "he ll", "hell o", "\u0120 w"])),
         ("tokenizer.ggml.bos_token_id", U32, len(bpe_tokens) - 2),
         ("tokenizer.ggml.eos_token_id", U32, len(bpe_tokens) - 1)]))

# The bundled model's own header and first keys, cut short.
with open(os.path.join(REPO, "models", "stories260K.gguf"), "rb") as f:
    write("fuzz_gguf", "stories260K_head", f.read(1024))

# ---- Tokenizers: byte 0 is the mode (bit 0 special, bit 1 decode ids) ------
texts = {
    "story": "Once upon a time, there was a little girl named Lily.",
    "spaces": "  two  spaces\tand\ttabs\n\nnewlines ",
    "utf8": "caf\u00e9 \u2615 \U0001F600 \u00fc\u00f1\u00ee\u00e7\u00f8d\u00e9 \u4e2d\u6587",
    "specials": "<s>hi</s><|begin_of_text|>x<|eot_id|> <unk> <|im_start|>",
    "digits": "12345678901234 3.14159 -42 1,000,000",
    "contractions": "I'm you're it's don't WE'LL they've",
    "invalid": b"\xff\xfe stray \xc3 \xe2\x82 \xf0\x9f\x98 \x80",
}
for target in ("fuzz_tokenizer_spm", "fuzz_tokenizer_bpe"):
    for name, text in texts.items():
        body = text if isinstance(text, bytes) else text.encode()
        write(target, name, b"\x00" + body)
        write(target, name + "_special", b"\x01" + body)
    write(target, "ids", b"\x02" + bytes(range(60)))
    write(target, "ids_special", b"\x07" + bytes([1, 0, 0, 200, 1, 0, 2, 0, 0, 255, 255, 255]))

# ---- --kv: "SPEC_OR_LIST\nBUDGETS\nPROMPT_LEN" ------------------------------
for i, seed in enumerate([
        "full", "local:recent=8", "sink:sinks=4,recent=508", "h2o:heavy=10%,recent=10%\n\n515",
        "h2only:heavy=12.5%\n\n100", "tova:k=64", "random:k=32,recent=4,seed=18446744073709551615",
        "full,h2o:heavy=10%,recent=10%,local:recent=8\n\n1000",
        "h2o,local,sink,tova,random,h2only,full\n4%,10%,20%,60%",
        "h2o,sink\n64,128", "h2o:heavy=150%,recent=10%\n\n5", "sink:recent=0.5%\n\n9"]):
    write("fuzz_kv_spec", "spec_%02d" % i, seed)

# ---- Chat: name \x1e jinja \x1e role \x1f content ... ----------------------
RS, US = "\x1e", "\x1f"
conversation = RS.join(["system" + US + "Be brief.", "user" + US + "Hi", "assistant" + US + "Hello!",
                        "user" + US + "Bye"])
for name, jinja in {
        "llama3": "{{ '<|start_header_id|>' + role + '<|end_header_id|>' + content + '<|eot_id|>' }}",
        "chatml": "{{ '<|im_start|>' + role + '\\n' + content + '<|im_end|>' }}",
        "llama2": "{{ '[INST] <<SYS>>' + system + '<</SYS>>' + content + ' [/INST]' }}",
        "mistral": "{{ '[INST] ' + content + ' [/INST]' }}{{ eos_token }}",
        "gemma": "{{ '<start_of_turn>' + role + '\\n' + content + '<end_of_turn>' }}",
        "phi3": "{{ '<|user|>\\n' + content + '<|end|>\\n<|assistant|>' }}",
        "zephyr": "{{ '<|user|>\\n' + content + eos_token }}{{ '<|assistant|>' }}",
        "phi4": "{{ '<|im_start|>' + role + '<|im_sep|>' + content }}"}.items():
    write("fuzz_chat_template", name, name + RS + jinja + RS + conversation)
write("fuzz_chat_template", "system_only", "gemma" + RS + RS + "system" + US + "alone")

# ---- Requests: byte 0 bit 0 = chat, bit 1 = whole HTTP requests, bits 2-7
# the size of each piece the reader is fed -------------------------------
for name, body in {
        "completion": '{"prompt": "Once upon a time", "max_tokens": 16, "temperature": 0.7}',
        "ids": '{"prompt": [1, 403, 407], "max_tokens": 4, "echo": true, "logprobs": 2}',
        "stream": '{"prompt": "x", "stream": true, "stream_options": {"include_usage": true}, '
                  '"stop": ["\\n", "."], "seed": 42, "kv": "h2o:heavy=10%,recent=10%"}',
        "bad_types": '{"prompt": 5, "max_tokens": "many", "n": 2, "top_p": 7}',
        "nested": '{"prompt": [[1, 2], [3]], "stop": "end", "ignore_eos": true, "top_k": -1}',
        "grammar": '{"prompt": "x", "grammar": "root ::= (\\"a\\" | [b-d]+){1,3} item\\n'
                   'item ::= [^\\\\x00-\\\\x1f]* \\"z\\"?"}',
        "json_schema": '{"prompt": "x", "json_schema": {"type": "object", "properties": '
                       '{"a": {"type": "array", "items": {"$ref": "#"}, "maxItems": 2}, '
                       '"b": {"anyOf": [{"type": "string", "maxLength": 3}, {"const": null}]}}, '
                       '"required": ["a"]}}'}.items():
    write("fuzz_api_request", name, "\x00" + body)
for name, body in {
        "chat": '{"messages": [{"role": "system", "content": "Be brief."}, '
                '{"role": "user", "content": "Hi"}], "stream": true, "kv": "full"}',
        "chat_logprobs": '{"messages": [{"role": "user", "content": "Hi"}], "logprobs": true, '
                         '"top_logprobs": 3, "max_tokens": 2}',
        "chat_bad": '{"messages": [{"role": "tool", "content": null}], "model": 1}',
        "chat_parts": '{"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]}',
        "chat_json": '{"messages": [{"role": "user", "content": "Hi"}], "response_format": '
                     '{"type": "json_schema", "json_schema": {"schema": {"enum": [1, "x"]}}}}'}.items():
    write("fuzz_api_request", name, "\x01" + body)
http_requests = {
    "http_post": "POST /v1/completions HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"
                 "Content-Length: 31\r\n\r\n{\"prompt\": \"x\", \"max_tokens\": 2}",
    "http_chunked": "POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "a;ext=1\r\n{\"prompt\":\r\n4\r\n \"x\"\r\n1\r\n}\r\n0\r\nX-T: 1\r\n\r\n",
    "http_pipelined": "GET /v1/kv/cmpl-1?layer=2 HTTP/1.1\r\nAuthorization: Bearer k\r\n\r\n"
                      "HEAD / HTTP/1.0\r\n\r\nGET /health HTTP/1.1\r\nConnection: close\r\n\r\n",
    "http_continue": "POST /v1/chat/completions HTTP/1.1\r\nExpect: 100-continue\r\n"
                     "Content-Length: 45\r\n\r\n{\"messages\": [{\"role\": \"user\", \"content\": 1}]}",
    "http_gzip": "POST / HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\n\x1f\x8b\x08\x00",
    "http_fields": "GET / HTTP/1.1\r\n" + "".join("X-%d: v\r\n" % i for i in range(12)) + "\r\n",
}
for i, (name, request) in enumerate(http_requests.items()):
    # Pieces of 1 byte, 15, 64 and one read for all, in turn.
    write("fuzz_api_request", name, bytes([2 | (i % 2) | ([0, 2, 9, 63][i % 4] << 2)]) + request.encode("latin-1"))
