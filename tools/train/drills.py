"""Short retrieval items in the long-context suite's own formats, for
training: many of them packed into one training sequence put tens of answers
in a step where one suite item at full length puts one.

The templates are those of src/eval/ruler/tasks.cc (niah, vt, passkey), the
keys come from the training half of its adjective list (words.cc), so no
evaluation key is ever trained on. Each item is a dict as `h2o mktask ruler`
writes it (task, context, question, outputs), with a haystack of a chosen
number of units, so that items of every size from a few dozen tokens to the
stage's length can be made.
"""
import os
import random
import re
import string

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORDS_CC = os.path.join(REPO, "src", "eval", "ruler", "words.cc")
ESSAY = os.path.join(REPO, "src", "eval", "ruler", "essay.txt")

NOISE = ("The grass is green. The sky is blue. The sun is yellow. Here we go. There and back "
         "again.")

# task -> (haystack, key kind, value kind, keys, values per key, queries)
NIAH = {
    "niah_single_1": ("noise", "words", "numbers", 1, 1, 1),
    "niah_single_2": ("essay", "words", "numbers", 1, 1, 1),
    "niah_single_3": ("essay", "words", "uuids", 1, 1, 1),
    "niah_multikey_1": ("essay", "words", "numbers", 4, 1, 1),
    "niah_multikey_2": ("needles", "words", "numbers", 1, 1, 1),
    "niah_multikey_3": ("needles", "uuids", "uuids", 1, 1, 1),
    "niah_multivalue": ("essay", "words", "numbers", 1, 4, 1),
    "niah_multiquery": ("essay", "words", "numbers", 4, 1, 4),
}
TASKS = list(NIAH) + ["vt", "passkey"]


def _string_array(source, name):
    body = re.search(name + r"\[\] = \{(.*?)\};", source, re.S).group(1)
    return re.findall(r'"([^"]+)"', body)


def train_keys():
    """The training half of the adjectives (words.cc's split), and the nouns."""
    source = open(WORDS_CC).read()
    adjectives = _string_array(source, "kAdjectives")
    return adjectives[len(adjectives) // 2:], _string_array(source, "kNouns")


def essay_sentences():
    text = " ".join(open(ESSAY).read().split())
    return [s for s in re.split(r"(?<=[.!?]) ", text) if s]


class Maker:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.adjectives, self.nouns = train_keys()
        self.sentences = essay_sentences()

    def number(self, digits=7):
        low = 10 ** (digits - 1)
        return str(low + self.rng.randrange(9 * low))

    def uuid(self):
        h = "".join(self.rng.choice("0123456789abcdef") for _ in range(32))
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{self.rng.choice('89ab')}{h[17:20]}-{h[20:]}"

    def value(self, kind):
        if kind == "numbers":
            return self.number()
        if kind == "uuids":
            return self.uuid()
        return f"{self.rng.choice(self.adjectives)}-{self.rng.choice(self.nouns)}"

    def niah(self, task, units):
        haystack, key_kind, value_kind, n_keys, n_values, n_queries = NIAH[task]
        rng = self.rng
        keys = []
        while len(keys) < n_keys:
            k = self.value(key_kind)
            if k not in keys:
                keys.append(k)
        values = [[self.value(value_kind) for _ in range(n_values)] for _ in keys]

        def needle(key, value):
            return f"One of the special magic {value_kind} for {key} is: {value}."

        needles = [needle(k, v) for k, vs in zip(keys, values) for v in vs]
        rng.shuffle(needles)
        if haystack == "essay":
            at = rng.randrange(len(self.sentences) - units) if units < len(self.sentences) else 0
            lines = self.sentences[at:at + units]
        elif haystack == "noise":
            lines = [NOISE] * units
        else:
            lines = []
            while len(lines) < units:
                k = self.value(key_kind)
                if k not in keys:
                    lines.append(needle(k, self.value(value_kind)))
        for n in needles:
            lines.insert(rng.randrange(len(lines) + 1), n)
        text = (" " if haystack == "essay" else "\n").join(lines)
        asked = rng.sample(range(n_keys), n_queries)
        outputs = [v for q in asked for v in values[q]]
        if n_values > 1:  # in the order they appear: the order a reader lists them in
            outputs.sort(key=lambda v: text.index(f": {v}."))
        one = n_queries * n_values == 1
        noun = value_kind[:-1] if one else value_kind
        qs = [keys[q] for q in asked]
        query = qs[0] if len(qs) == 1 else ", ".join(qs[:-1]) + ", and " + qs[-1]
        context = (f"{'A' if one else 'Some'} special magic {noun} {'is' if one else 'are'} hidden "
                   f"within the following text. Make sure to memorize it. I will quiz you about "
                   f"the {noun} afterwards.\n{text}\n")
        question = (f"What {'is the' if one else 'are all the'} special magic {noun} for {query} "
                    f"mentioned in the provided text? The special magic {noun} for {query} "
                    f"mentioned in the provided text {'is' if one else 'are'}")
        return {"task": task, "context": context, "question": question, "outputs": outputs}

    def variable(self):
        return "".join(self.rng.choice(string.ascii_uppercase) for _ in range(5))

    def vt(self, units):
        """vt without its solved example (the suite's items keep it)."""
        rng = self.rng
        names = []
        while len(names) < 5:
            v = self.variable()
            if v not in names:
                names.append(v)
        value = self.number(5)
        chain = [f"VAR {names[0]} = {value}"] + [f"VAR {names[j + 1]} = VAR {names[j]}"
                                                 for j in range(4)]
        at = sorted(rng.randrange(units + 1) for _ in chain)
        lines = [NOISE] * units
        for j in reversed(range(len(chain))):
            lines.insert(at[j], chain[j])
        context = ("Memorize and track the chain(s) of variable assignment hidden in the following "
                   "text.\n\n" + "\n".join(lines) + "\n")
        question = (f"Question: Find all variables that are assigned the value {value} in the text "
                    f"above. Answer: According to the chain(s) of variable assignment in the text "
                    f"above, 5 variables are assigned the value {value}, they are: ")
        return {"task": "vt", "context": context, "question": question, "outputs": names}

    def passkey(self, units):
        key = str(1 + self.rng.randrange(50000))
        at = self.rng.randrange(units + 1)
        context = ("There is an important info hidden inside a lot of irrelevant text. Find it and "
                   "memorize them. I will quiz you about the important information there.")
        for i in range(units + 1):
            if i == at:
                context += f" The pass key is {key}. Remember it. {key} is the pass key."
            if i < units:
                context += " " + NOISE
        return {"task": "passkey", "context": context, "question": " What is the pass key? The "
                "pass key is", "outputs": [key]}

    def item(self, task, units):
        if task == "vt":
            return self.vt(units)
        if task == "passkey":
            return self.passkey(units)
        return self.niah(task, units)

    def items(self, count, max_units):
        """`count` items of tasks drawn evenly, haystacks of 0 to max_units
        units drawn log-uniformly (short ones common, long ones present)."""
        out = []
        for _ in range(count):
            units = int((max_units + 1) ** self.rng.random()) - 1
            out.append(self.item(self.rng.choice(TASKS), units))
        return out
