// h2o.cpp playground: runs one or two KV policies side by side over SSE
// and shows, from GET /v1/kv/{id}, which tokens each cache keeps.
//
// The cache map is one canvas, not a DOM cell per (head, token): past a few
// pixels per token, positions are bucketed into columns, so a 22-layer,
// 4096-token cache draws in a few milliseconds. URL parameters fill the
// form (prompt, kv, kv2, max_tokens, temperature, top_p, top_k, seed, mode,
// layer) and run=1 starts a run on load; document.body.dataset.state says
// idle, running, done or error (what scripts/test_playground.sh waits for).
//
// The page opens on the first evicting run (the full cache keeps every
// token and scores none, so its map says nothing). In chat mode each
// policy keeps its own conversation, sent whole with every turn as chat
// clients do; the server's prompt cache resumes what it already fed, and
// the run's status says how many prompt tokens it reused.
'use strict';

const $ = (id) => document.getElementById(id);
const POLL_MS = 250;
const FETCH_TIMEOUT_MS = 15000;
const MIN_CELL_PX = 2;

const page = {
  runs: [],          // {kv, id, el, status, output, tokens, kv state, ...}
  conversations: {}, // chat mode: policy -> the messages so far
  selected: 0,       // index into runs of the run the map shows
  nLayer: 0,
  nHeadKv: 0,
  generation: 0,     // bumps on each Generate, so stale loops stop
  lastRenderMs: 0,
  renders: 0,
};
window.h2oPlayground = page;

function showError(message) {
  const box = $('error');
  box.textContent = message;
  box.hidden = !message;
}

function headers() {
  const h = {'Content-Type': 'application/json'};
  const key = $('api-key').value.trim();
  if (key) h.Authorization = 'Bearer ' + key;
  return h;
}

// fetch with a deadline: a server that stops answering becomes an error,
// never a hung page.
async function fetchWithTimeout(url, options = {}, timeoutMs = FETCH_TIMEOUT_MS) {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  if (options.signal) options.signal.addEventListener('abort', () => ctl.abort());
  try {
    return await fetch(url, {...options, signal: ctl.signal});
  } finally {
    clearTimeout(timer);
  }
}

// The message of an OpenAI-shaped error body, or the HTTP status.
async function errorText(res) {
  const text = await res.text();
  try {
    const body = JSON.parse(text);
    if (body.error && body.error.message) return `HTTP ${res.status}: ${body.error.message}`;
  } catch (e) { /* not JSON */ }
  return `HTTP ${res.status}: ${text.slice(0, 200) || res.statusText}`;
}

function fmtBytes(n) {
  if (!(n >= 0)) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

// Score -> colour (viridis, reversed: high scores dark), evicted grey.
const RAMP = [[253, 231, 37], [94, 201, 98], [33, 145, 140], [59, 82, 139], [68, 1, 84]];
function rampColour(t) {
  t = Math.min(1, Math.max(0, t)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(t));
  const f = t - i;
  const c = RAMP[i].map((v, k) => Math.round(v + (RAMP[i + 1][k] - v) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}
const EVICTED = '#d9dce2';
const NOT_YET = '#ffffff';
const KEPT_UNSCORED = rampColour(0.5);  // a sliding-window layer tracks no scores

// ---------------------------------------------------------------- model

async function loadModel() {
  try {
    const res = await fetchWithTimeout('/v1/models', {headers: headers()});
    if (!res.ok) throw new Error(await errorText(res));
    const body = await res.json();
    page.model = body.data[0].id;
    $('model').textContent = 'model: ' + page.model;
  } catch (e) {
    $('model').textContent = 'model: unknown';
    showError('Could not read /v1/models: ' + e.message);
  }
}

// ---------------------------------------------------------------- runs

function runElement(run, index) {
  const el = document.createElement('article');
  el.className = 'run';
  el.dataset.index = index;
  el.innerHTML = `<h2></h2><div class="status">starting…</div>
    <div class="gauges">
      <div class="gauge kv"><div class="label">KV bytes kept vs full cache</div><div class="value">–</div><div class="bar"><div style="width:0"></div></div></div>
      <div class="gauge speed"><div class="label">tokens/s (prefill included)</div><div class="value">–</div></div>
      <div class="gauge evictions"><div class="label">evictions</div><div class="value">–</div></div>
    </div>
    <div class="history"></div>
    <div class="output"></div>
    <div class="label muted">Tokens shaded by how many (layer, head) slots hold them:</div>
    <div class="tokens"></div>`;
  el.querySelector('h2').textContent = run.kv;
  el.addEventListener('click', () => selectRun(index));
  return el;
}

function setStatus(run, text, failed = false) {
  const s = run.el.querySelector('.status');
  s.textContent = text;
  s.classList.toggle('failed', failed);
}

function selectRun(index) {
  page.selected = index;
  $('map-run').value = String(index);
  page.runs.forEach((r, i) => r.el.classList.toggle('selected', i === index));
  const run = page.runs[index];
  if (run) {
    run.kvState = null;  // the other layer choice may not be loaded yet
    refreshKv(run).then(render);
  }
}

// The conversation so far, as the run's box shows it above the reply.
function renderHistory(run) {
  const box = run.el.querySelector('.history');
  box.textContent = '';
  for (const m of run.messages || []) {
    const line = document.createElement('div');
    line.className = m.role === 'user' ? 'turn-user' : 'turn-assistant';
    line.textContent = (m.role === 'user' ? '> ' : '') + m.content;
    box.appendChild(line);
  }
}

function requestBody(run) {
  const kv = run.kv;
  const mode = $('mode').value;
  const body = {
    max_tokens: Number($('max-tokens').value),
    temperature: Number($('temperature').value),
    top_p: Number($('top-p').value),
    top_k: Number($('top-k').value),
    seed: Number($('seed').value),
    kv,
    stream: true,
    stream_options: {include_usage: true},
    // The page draws this run's cache from GET /v1/kv/{id}, which answers
    // only for requests that ask (or a server started with --kv-endpoint).
    kv_endpoint: true,
  };
  if (page.model) body.model = page.model;
  if (mode === 'chat') body.messages = [...run.messages, {role: 'user', content: $('prompt').value}];
  else body.prompt = $('prompt').value;
  return [mode === 'chat' ? '/v1/chat/completions' : '/v1/completions', body];
}

async function generate() {
  stopAll();
  showError('');
  const generation = ++page.generation;
  const policies = [$('kv-a').value.trim(), $('kv-b').value.trim()].filter((k) => k);
  if (!policies.length) {
    showError('Name at least one KV policy (e.g. full).');
    return;
  }
  const runsEl = $('runs');
  runsEl.textContent = '';
  $('map-run').textContent = '';
  const chat = $('mode').value === 'chat';
  page.runs = policies.map((kv, i) => {
    const run = {kv, id: null, output: '', nTokens: 0, started: performance.now(),
                 lastToken: 0, kvState: null, done: false, failed: false,
                 controller: new AbortController(), generation,
                 messages: chat ? page.conversations[kv] || [] : []};
    run.el = runElement(run, i);
    renderHistory(run);
    runsEl.appendChild(run.el);
    const opt = document.createElement('option');
    opt.value = String(i);
    opt.textContent = kv;
    $('map-run').appendChild(opt);
    return run;
  });
  document.body.dataset.state = 'running';
  $('run').disabled = true;
  $('stop').disabled = false;
  const evicting = page.runs.findIndex((r) => r.kv !== 'full');
  selectRun(evicting >= 0 ? evicting : 0);
  const prompt = $('prompt').value;
  await Promise.all(page.runs.map((run) => Promise.all([stream(run), poll(run)])));
  if (generation !== page.generation) return;
  if (chat && !page.runs.some((r) => r.failed)) {
    for (const run of page.runs) {
      page.conversations[run.kv] = [...run.messages, {role: 'user', content: prompt},
                                    {role: 'assistant', content: run.output}];
    }
    $('prompt').value = '';
    $('new-chat').hidden = false;
  }
  $('run').disabled = false;
  $('stop').disabled = true;
  render();
  document.body.dataset.state = page.runs.some((r) => r.failed) ? 'error' : 'done';
}

function stopAll() {
  for (const run of page.runs) {
    if (!run.done) run.controller.abort();
  }
}

function finish(run, statusText, failed = false) {
  run.done = true;
  run.failed = run.failed || failed;
  setStatus(run, statusText, failed);
  if (failed) showError(`${run.kv}: ${statusText}`);
}

// POSTs the completion and reads its Server-Sent Events.
async function stream(run) {
  const [path, body] = requestBody(run);
  let res;
  try {
    res = await fetch(path, {method: 'POST', headers: headers(), body: JSON.stringify(body),
                             signal: run.controller.signal});
  } catch (e) {
    finish(run, run.controller.signal.aborted ? 'stopped' : 'request failed: ' + e.message,
           !run.controller.signal.aborted);
    return;
  }
  if (!res.ok) {
    finish(run, await errorText(res), true);
    return;
  }
  run.id = res.headers.get('X-Request-Id');
  setStatus(run, `${run.id || 'request'}: running`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, {stream: true});
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        if (!event.startsWith('data: ')) continue;
        const data = event.slice(6);
        if (data === '[DONE]') {
          const details = run.usage && run.usage.prompt_tokens_details;
          const reused = details && details.cached_tokens > 0
              ? `; ${details.cached_tokens} of ${run.usage.prompt_tokens} prompt tokens ` +
                'reused from the prompt cache'
              : '';
          finish(run, `${run.id}: finished, ${run.nTokens} tokens${reused}`);
          return;
        }
        onChunk(run, JSON.parse(data));
        if (run.done) return;
      }
    }
    if (!run.done) finish(run, 'the stream ended without [DONE]', true);
  } catch (e) {
    if (!run.done) {
      const stopped = run.controller.signal.aborted;
      finish(run, stopped ? `${run.id}: stopped` : 'stream failed: ' + e.message, !stopped);
    }
  }
}

function onChunk(run, chunk) {
  if (chunk.error) {
    finish(run, chunk.error.message || 'server error', true);
    return;
  }
  if (!run.id && chunk.id) run.id = chunk.id;
  if (chunk.usage) {
    run.usage = chunk.usage;
    return;
  }
  const choice = chunk.choices && chunk.choices[0];
  if (!choice) return;
  const delta = choice.text !== undefined ? choice.text : (choice.delta && choice.delta.content) || '';
  if (delta || choice.finish_reason === null) {
    const now = performance.now();
    run.lastToken = now;
    run.nTokens += 1;
    run.output += delta;
    run.el.querySelector('.output').textContent = run.output;
    renderGauges(run);
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Reads the cache state while the run streams, and once more at its end.
async function poll(run) {
  while (run.generation === page.generation) {
    const wasDone = run.done;
    if (run.id) {
      await refreshKv(run);
      if (page.runs[page.selected] === run) render();
      else renderGauges(run);
    }
    if (wasDone) return;
    await sleep(POLL_MS);
  }
}

function layerChoice() {
  const v = $('layer').value;
  return v === 'all' ? 'all' : Number(v);
}

async function refreshKv(run) {
  if (!run.id) return;
  // The selected run needs its layer's heads; the other only its totals.
  const wanted = page.runs[page.selected] === run ? layerChoice() : 0;
  await fetchKv(run, wanted);
  // The first answer names the layers, which may change the choice.
  const now = page.runs[page.selected] === run ? layerChoice() : 0;
  if (now !== wanted) await fetchKv(run, now);
}

async function fetchKv(run, wanted) {
  try {
    const res = await fetchWithTimeout(`/v1/kv/${encodeURIComponent(run.id)}?layer=${wanted}`,
                                       {headers: headers()});
    if (!res.ok) throw new Error(await errorText(res));
    const state = await res.json();
    state.layerChoice = wanted;
    run.kvState = state;
    indexScores(state);
    setLayers(state.n_layer);
    page.nHeadKv = state.n_head_kv;
  } catch (e) {
    run.kvError = e.name === 'AbortError' ? 'cache state: no answer in time' : e.message;
    showError(`${run.kv}: cache state: ${run.kvError}`);
  }
}

// Per layer and head: position -> score, for hovering.
function indexScores(state) {
  for (const layer of state.layers || []) {
    for (const head of layer.heads) {
      const scores = new Map();
      head.positions.forEach((p, i) => scores.set(p, head.scores ? head.scores[i] : null));
      head.byPosition = scores;
    }
  }
}

function setLayers(n) {
  if (n === page.nLayer) return;
  page.nLayer = n;
  const sel = $('layer');
  const keep = sel.value;
  sel.textContent = '';
  const all = document.createElement('option');
  all.value = 'all';
  all.textContent = 'all layers';
  sel.appendChild(all);
  for (let l = 0; l < n; l++) {
    const o = document.createElement('option');
    o.value = String(l);
    o.textContent = `layer ${l}`;
    sel.appendChild(o);
  }
  // The first time: layer 0, unless the URL chose.
  const wanted = page.layerParam !== undefined ? page.layerParam : page.layerChosen ? keep : '0';
  page.layerChosen = true;
  sel.value = [...sel.options].some((o) => o.value === wanted) ? wanted : '0';
  page.layerParam = undefined;
}

// ---------------------------------------------------------------- rendering

function render() {
  const t0 = performance.now();
  for (const run of page.runs) renderGauges(run);
  const run = page.runs[page.selected];
  if (run) {
    renderTokens(run);
    renderMap(run);
  }
  page.lastRenderMs = performance.now() - t0;
  page.renders += 1;
}

function renderGauges(run) {
  const s = run.kvState;
  const el = run.el;
  if (s && s.kv_bytes !== undefined) {
    const ratio = s.kv_bytes_full > 0 ? s.kv_bytes_kept / s.kv_bytes_full : 0;
    el.querySelector('.kv .value').textContent =
        `${fmtBytes(s.kv_bytes_kept)} / ${fmtBytes(s.kv_bytes_full)} (${(100 * ratio).toFixed(0)}%)`;
    el.querySelector('.kv').title = `K/V rows kept vs a full cache of ${s.n_past} tokens; ` +
        `${fmtBytes(s.kv_bytes)} allocated (budget + chunk, with bookkeeping)`;
    el.querySelector('.kv .bar > div').style.width = `${Math.min(100, 100 * ratio)}%`;
    el.querySelector('.evictions .value').textContent = String(s.evictions);
  }
  // Since the request started (prefill included): chunks may arrive in
  // bursts, so a rate between first and last token would overstate it.
  if (run.nTokens > 0) {
    const seconds = (run.lastToken - run.started) / 1000;
    el.querySelector('.speed .value').textContent =
        seconds > 0 ? (run.nTokens / seconds).toFixed(1) : '–';
  }
}

function renderTokens(run) {
  const s = run.kvState;
  const box = run.el.querySelector('.tokens');
  if (!s || !s.tokens) {
    box.textContent = s && s.status === 'queued' ? 'waiting in the queue…' : '';
    return;
  }
  const slots = s.n_layer * s.n_head_kv;
  // Spans are reused: only new positions are created.
  while (box.childElementCount > s.tokens.length) box.lastElementChild.remove();
  if (box.firstChild && box.firstChild.nodeType === Node.TEXT_NODE) box.textContent = '';
  for (let p = box.childElementCount; p < s.tokens.length; p++) {
    const span = document.createElement('span');
    span.className = 'tok';
    span.dataset.pos = String(p);
    span.textContent = s.tokens[p];
    box.appendChild(span);
  }
  const spans = box.children;
  for (let p = 0; p < spans.length; p++) {
    const held = s.slots_per_position[p] || 0;
    spans[p].dataset.slots = String(held);
    spans[p].style.background = held ? rampColour(held / slots) : '';
    spans[p].style.color = held / slots > 0.5 ? '#fff' : '';
  }
}

// Columns of the map: `bucket` positions each, so no column is narrower
// than MIN_CELL_PX.
function mapGeometry(nPast, canvas) {
  const width = Math.max(200, Math.floor(canvas.parentElement.clientWidth || 1200));
  const cols = Math.max(1, Math.min(nPast, Math.floor(width / MIN_CELL_PX)));
  const bucket = Math.ceil(nPast / cols);
  return {width, cols: Math.ceil(nPast / bucket), bucket};
}

function renderMap(run) {
  const s = run.kvState;
  const canvas = $('map');
  const tbody = document.querySelector('#heads tbody');
  const thead = document.querySelector('#heads thead');
  const caption = $('map-caption');
  const ctx = canvas.getContext('2d');
  if (!s || !s.layers || !s.layers.length || !s.n_past) {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    tbody.textContent = '';
    caption.textContent = s && s.status === 'queued' ? 'queued' : '';
    return;
  }
  const all = s.layerChoice === 'all';
  const rows = all ? s.layers.length : s.layers[0].heads.length;
  const geo = mapGeometry(s.n_past, canvas);
  const rowPx = Math.max(6, Math.min(28, Math.floor(360 / rows)));
  canvas.width = geo.width;
  canvas.height = rows * rowPx;
  canvas.style.height = `${canvas.height}px`;
  const cellPx = geo.width / geo.cols;
  page.map = {run, all, rows, rowPx, cellPx, bucket: geo.bucket};
  ctx.fillStyle = NOT_YET;
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  // A cell's value: all layers, the share of the layer's heads that keep
  // its positions; one layer, the highest score kept there (evicted: grey).
  const cell = new Float64Array(geo.cols);
  const kept = new Uint8Array(geo.cols);
  if (all) {
    for (let r = 0; r < rows; r++) {
      cell.fill(0);
      const heads = s.layers[r].heads;
      for (const h of heads) for (const p of h.positions) cell[Math.floor(p / geo.bucket)] += 1;
      for (let c = 0; c < geo.cols; c++) {
        const positions = Math.min(geo.bucket, s.n_past - c * geo.bucket);  // the last is short
        ctx.fillStyle = cell[c] ? rampColour(cell[c] / (heads.length * positions)) : EVICTED;
        ctx.fillRect(c * cellPx, r * rowPx, Math.ceil(cellPx), rowPx - 1);
      }
    }
  } else {
    let max = 0;
    for (const h of s.layers[0].heads) for (const v of h.scores || []) max = Math.max(max, v);
    const scale = Math.log1p(max) || 1;
    for (let r = 0; r < rows; r++) {
      cell.fill(0);
      kept.fill(0);
      const h = s.layers[0].heads[r];
      h.positions.forEach((p, i) => {
        const c = Math.floor(p / geo.bucket);
        kept[c] = 1;
        cell[c] = Math.max(cell[c], h.scores ? h.scores[i] : 0);
      });
      for (let c = 0; c < geo.cols; c++) {
        ctx.fillStyle = !kept[c] ? EVICTED : h.scores ? rampColour(Math.log1p(cell[c]) / scale) : KEPT_UNSCORED;
        ctx.fillRect(c * cellPx, r * rowPx, Math.ceil(cellPx), rowPx - 1);
      }
    }
  }
  caption.textContent = `${run.kv} · ${s.status} · ${s.n_past} positions` +
      (geo.bucket > 1 ? ` · ${geo.bucket} positions per column` : '') +
      ` · ${all ? s.layers.length + ' layers' : s.n_head_kv + ' KV heads of layer ' + s.layers[0].layer}`;
  renderTable(s, all, thead, tbody);
}

// One row per KV head of the layer (kept count, score mass, heaviest
// position), or per layer for "all layers".
function renderTable(s, all, thead, tbody) {
  thead.innerHTML = all
      ? '<tr><th>layer</th><th>kept (all heads)</th><th>of</th></tr>'
      : '<tr><th>KV head</th><th>kept</th><th>budget</th><th>score sum</th><th>heaviest position</th></tr>';
  const frag = document.createDocumentFragment();
  if (all) {
    for (const layer of s.layers) {
      const tr = document.createElement('tr');
      tr.className = 'layer-row';
      const keptAll = layer.heads.reduce((a, h) => a + h.positions.length, 0);
      tr.dataset.layer = String(layer.layer);
      tr.dataset.kept = String(keptAll);
      tr.innerHTML = `<td>${layer.layer}</td><td>${keptAll}</td><td>${layer.heads.length * s.n_past}</td>`;
      frag.appendChild(tr);
    }
  } else {
    for (const h of s.layers[0].heads) {
      const tr = document.createElement('tr');
      tr.className = 'head-row';
      tr.dataset.head = String(h.head);
      tr.dataset.kept = String(h.positions.length);
      let sum = 0, best = -1, bestScore = 0;
      (h.scores || []).forEach((v, i) => {
        sum += v;
        if (v > bestScore) { bestScore = v; best = h.positions[i]; }
      });
      // A cache that evicts nothing (full) scores nothing: all zeros.
      const scored = h.scores && best >= 0;
      const heavy = scored ? `${best} ${JSON.stringify(s.tokens[best] || '')}` : '–';
      tr.innerHTML = `<td>${h.head}</td><td>${h.positions.length}</td><td>${s.budget}</td>` +
                     `<td>${scored ? sum.toFixed(3) : 'not tracked'}</td><td></td>`;
      tr.lastElementChild.textContent = heavy;
      frag.appendChild(tr);
    }
  }
  tbody.textContent = '';
  tbody.appendChild(frag);
}

// ---------------------------------------------------------------- hover

function tooltipFor(s, pos) {
  const lines = [`position ${pos}: ${JSON.stringify(s.tokens ? s.tokens[pos] : '')}`,
                 `kept in ${s.slots_per_position ? s.slots_per_position[pos] : '?'} of ` +
                 `${s.n_layer * s.n_head_kv} (layer, head) slots`];
  if (s.layerChoice !== 'all' && s.layers && s.layers[0]) {
    lines.push(`layer ${s.layers[0].layer}:`);
    for (const h of s.layers[0].heads) {
      const has = h.byPosition && h.byPosition.has(pos);
      const score = has ? h.byPosition.get(pos) : undefined;
      lines.push(`  head ${h.head}: ${!has ? 'evicted' : score === null ? 'kept' : 'kept, score ' + score.toPrecision(4)}`);
    }
  }
  return lines.join('\n');
}

function showTooltip(text, x, y) {
  const tip = $('tooltip');
  tip.textContent = text;
  tip.hidden = false;
  tip.style.left = `${Math.min(x + 14, window.innerWidth - 320)}px`;
  tip.style.top = `${y + 14}px`;
}

function onMapHover(ev) {
  const m = page.map;
  if (!m || !m.run.kvState) return;
  const rect = ev.target.getBoundingClientRect();
  const x = (ev.clientX - rect.left) * (ev.target.width / rect.width);
  const y = (ev.clientY - rect.top) * (ev.target.height / rect.height);
  const s = m.run.kvState;
  const row = Math.floor(y / m.rowPx);
  const first = Math.floor(x / m.cellPx) * m.bucket;
  if (row < 0 || row >= m.rows || first >= s.n_past) return;
  const last = Math.min(s.n_past, first + m.bucket) - 1;
  const label = m.all ? `layer ${s.layers[row].layer}` : `KV head ${row}`;
  const range = last > first ? `positions ${first}–${last} (hovering shows the first)\n` : '';
  showTooltip(`${label}\n${range}${tooltipFor(s, first)}`, ev.clientX, ev.clientY);
}

function onTokenHover(ev) {
  const span = ev.target.closest('.tok');
  if (!span) return;
  const run = page.runs[Number(span.closest('.run').dataset.index)];
  if (run && run.kvState) showTooltip(tooltipFor(run.kvState, Number(span.dataset.pos)), ev.clientX, ev.clientY);
}

// ---------------------------------------------------------------- start

function applyUrlParameters() {
  const q = new URLSearchParams(location.search);
  const fields = {prompt: 'prompt', kv: 'kv-a', kv2: 'kv-b', max_tokens: 'max-tokens',
                  temperature: 'temperature', top_p: 'top-p', top_k: 'top-k', seed: 'seed',
                  mode: 'mode'};
  for (const [param, id] of Object.entries(fields)) {
    if (q.has(param)) $(id).value = q.get(param);
  }
  if (q.has('layer')) page.layerParam = q.get('layer');
  return q.get('run') === '1';
}

$('form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  generate();
});
$('stop').addEventListener('click', stopAll);
$('new-chat').addEventListener('click', () => {
  page.conversations = {};
  $('new-chat').hidden = true;
  for (const run of page.runs) {
    run.messages = [];
    renderHistory(run);
  }
});
$('mode').addEventListener('change', () => {
  $('new-chat').hidden = $('mode').value !== 'chat' || !Object.keys(page.conversations).length;
});
$('layer').addEventListener('change', () => selectRun(page.selected));
$('map-run').addEventListener('change', () => selectRun(Number($('map-run').value)));
$('map').addEventListener('mousemove', onMapHover);
$('map').addEventListener('mouseleave', () => { $('tooltip').hidden = true; });
$('runs').addEventListener('mouseover', onTokenHover);
$('runs').addEventListener('mouseleave', () => { $('tooltip').hidden = true; });
window.addEventListener('resize', () => render());

const autorun = applyUrlParameters();
loadModel().then(() => { if (autorun) generate(); });
