"""The Python bindings (python/h2o) against the CLI and the independent
references: greedy ids equal `h2o generate --temp 0 --print-ids`'s under
several policies, per-token NLL equals reference_nll.json's, errors carry
the C interface's codes, and `pip install` works offline.

Run by ctest with H2O_LIBRARY and H2O_BIN set; argv: the source directory."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SRC = sys.argv.pop(1)
sys.path.insert(0, os.path.join(SRC, "python"))
import h2o  # noqa: E402

MODEL = os.path.join(SRC, "models", "stories260K.gguf")
DATA = os.path.join(SRC, "tests", "data", "stories260K")


class Bindings(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = h2o.Model(MODEL)

    def cli_ids(self, prompt, n, kv):
        out = subprocess.run([os.environ["H2O_BIN"], "generate", "-m", MODEL, "-p", prompt, "-n",
                              str(n), "--temp", "0", "--kv", kv, "--print-ids", "-q"],
                             check=True, capture_output=True, text=True).stdout
        return [int(x) for x in out.split()]

    def test_greedy_ids_equal_the_cli(self):
        prompt = "Once upon a time, there was a little"
        for kv in ["full", "h2o:heavy=8,recent=8", "local:recent=12", "sink:sinks=4,recent=12",
                   "tova:k=16", "snapkv:budget=16,window=4"]:
            session = self.model.session(kv=kv, n_threads=2)
            ids = self.model.tokenize(prompt)
            got = ids + session.generate(ids, max_tokens=48)
            self.assertEqual(got, self.cli_ids(prompt, 48, kv), kv)

    def test_tokenize_equals_the_cli(self):
        text = "Lily and Ben saw a big red ball."
        out = subprocess.run([os.environ["H2O_BIN"], "tokenize", "-m", MODEL, "-p", text, "-q"],
                             check=True, capture_output=True, text=True).stdout
        self.assertEqual(self.model.tokenize(text), [int(x) for x in out.split()])
        self.assertEqual(self.model.detokenize(self.model.tokenize(text)), text)

    def test_per_token_nll_equals_the_reference(self):
        full = json.load(open(os.path.join(DATA, "reference_nll.json")))[0]
        stream = full["per_stream"][0]
        ids = [int(x) for x in open(os.path.join(DATA, "streams", stream["stream"])).read().split()]
        session = self.model.session(n_ctx=512, max_chunk=64, n_threads=2)
        nll = session.score(ids)
        self.assertEqual(len(nll), stream["tokens"])
        self.assertAlmostEqual(sum(nll), stream["nll_sum"], delta=1e-3 * stream["nll_sum"])

    def test_kv_stats_show_the_budget(self):
        session = self.model.session(kv="h2o:heavy=10%,recent=10%", prompt_len=200, max_chunk=1)
        session.generate(self.model.tokenize("Once upon a time"), max_tokens=60, stop_at_eog=False)
        st = session.kv_stats()
        self.assertEqual(st["policy"], "h2o:heavy=20,recent=20")
        self.assertEqual(st["budget"], 40)
        self.assertEqual(st["max_head_kept"], 40)
        self.assertLess(st["allocated_bytes"], st["full_cache_bytes"])

    def test_errors_carry_codes(self):
        with self.assertRaises(h2o.Error) as e:
            h2o.Model("/nonexistent.gguf")
        self.assertEqual(e.exception.code, -2)
        self.assertIn("/nonexistent.gguf", str(e.exception))
        with self.assertRaises(h2o.Error) as e:
            self.model.session(kv="h2o:heavy=x")
        self.assertEqual(e.exception.code, -1)
        session = self.model.session(n_ctx=4)
        with self.assertRaises(h2o.Error) as e:
            session.eval([1, 2, 3, 4, 5])
        self.assertEqual(e.exception.code, -3)
        with self.assertRaises(h2o.Error) as e:
            session.eval([10 ** 6])
        self.assertEqual(e.exception.code, -1)

    def test_pip_installs_offline(self):
        for module in ("pip", "setuptools"):
            if subprocess.run([sys.executable, "-c", "import " + module]).returncode != 0:
                self.skipTest(f"{sys.executable} has no {module} (scripts/setup.sh installs it)")
        with tempfile.TemporaryDirectory() as target, tempfile.TemporaryDirectory() as build:
            # A copy: pip writes build/ and *.egg-info beside setup.py.
            subprocess.run(["cp", "-r", os.path.join(SRC, "python"), build], check=True)
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index",
                            "--target", target, os.path.join(build, "python")], check=True,
                           capture_output=True)
            out = subprocess.run([sys.executable, "-c", "import h2o; print(h2o.__version__)"],
                                 env=dict(os.environ, PYTHONPATH=target), check=True,
                                 capture_output=True, text=True).stdout
            self.assertEqual(out.strip(), h2o.__version__)


if __name__ == "__main__":
    unittest.main()
