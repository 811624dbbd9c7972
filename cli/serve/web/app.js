// heapdump serve: the page. Plain JavaScript, no framework, nothing
// from the network. Every string from the dump goes into the page as a
// text node (textContent), never as markup.
'use strict';

const TOKEN = new URLSearchParams(location.search).get('token') || '';
const PAGE = 50;
let OVERVIEW = null;

// Control bytes and bidi controls of dump strings shown as \u00XX, as
// the text output of the CLI shows them: visible, and unable to reorder
// or hide the text around them.
function visible(s) {
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g,
    c => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === 'onclick') e.addEventListener('click', v);
    else if (k === 'text') e.textContent = visible(String(v));
    else e.setAttribute(k, v);
  }
  for (const k of kids) {
    if (k === null || k === undefined) continue;
    e.append(typeof k === 'object' ? k : document.createTextNode(visible(String(k))));
  }
  return e;
}

function num(n) { return n === null || n === undefined ? '' : Number(n).toLocaleString('en-US'); }
function bytes(n) {
  const u = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0, x = Number(n);
  while (x >= 1000 && i < u.length - 1) { x /= 1000; i++; }
  return (i ? x.toFixed(1) : String(x)) + ' ' + u[i];
}

async function api(path, params) {
  const q = new URLSearchParams(params || {});
  q.set('token', TOKEN);
  const r = await fetch('/api/' + path + '?' + q.toString(), { cache: 'no-store' });
  const j = await r.json();
  if (!r.ok) throw new Error(j.error || r.statusText);
  return j;
}

function hashParams() {
  const h = location.hash.replace(/^#/, '');
  const i = h.indexOf('?');
  return { route: i < 0 ? h : h.slice(0, i), params: new URLSearchParams(i < 0 ? '' : h.slice(i + 1)) };
}

function link(route, params, text, id) {
  const q = new URLSearchParams(params || {}).toString();
  return el('a', { href: '#' + route + (q ? '?' + q : ''), id }, text);
}

function objLink(o, id) {
  return link('/object', { address: o.address }, o.address, id);
}

function site(o) {
  return o.file ? o.file + ':' + o.line + (o.method ? ' in ' + o.method : '') : '';
}

function main() { return document.getElementById('main'); }
function show(...nodes) { const m = main(); m.replaceChildren(...nodes); }

function table(head, rows, opts) {
  opts = opts || {};
  const tr = el('tr', {});
  head.forEach((h, i) => {
    const th = el('th', { class: h.num ? 'num' : null, 'data-sort': h.sort || null }, h.label);
    if (h.sort && opts.onsort) th.addEventListener('click', () => opts.onsort(h.sort));
    tr.append(th);
  });
  const t = el('table', { id: opts.id || null }, el('thead', {}, tr));
  const tb = el('tbody', {});
  for (const r of rows) {
    tb.append(el('tr', {}, ...r.map((c, i) => el('td', { class: head[i].num ? 'num' : null }, c))));
  }
  t.append(tb);
  return t;
}

function pager(total, offset, limit, go) {
  const p = el('div', { class: 'pager' });
  const from = total ? offset + 1 : 0, to = Math.min(total, offset + limit);
  p.append(el('button', { id: 'prev', disabled: offset > 0 ? null : 'disabled', onclick: () => go(Math.max(0, offset - limit)) }, '‹ previous'));
  p.append(el('button', { id: 'next', disabled: to < total ? null : 'disabled', onclick: () => go(offset + limit) }, 'next ›'));
  p.append(el('span', { class: 'muted' }, num(from) + '–' + num(to) + ' of ' + num(total)));
  return p;
}

function kv(pairs, id) {
  return el('table', { class: 'kv', id }, el('tbody', {}, ...pairs.filter(p => p).map(([k, v, vid]) =>
    el('tr', {}, el('th', {}, k), el('td', { id: vid || null, 'data-value': typeof v === 'number' ? String(v) : null }, typeof v === 'number' ? num(v) : v)))));
}

function pathList(p, id) {
  if (!p) return el('p', { class: 'muted' }, 'no root reaches it');
  const ol = el('ol', { class: 'path', id });
  ol.append(el('li', {}, el('code', {}, 'root ' + (p.root || '?') + (p.root_name ? ' ' + p.root_name : '')),
    p.note ? el('span', { class: 'muted note' }, ' (' + p.note + ')') : null));
  // runs of repeated hops ([start, period, count], the library's
  // hd_path_fold): the first repetition shown, the others in one item
  const runs = p.runs || [];
  let r = 0;
  for (let i = 0; i < p.hops.length; i++) {
    ol.append(el('li', {}, objLink(p.hops[i]), ' ', el('span', { class: 'hop' }, p.text[i])));
    const u = runs[r];
    if (u && i + 1 === u[0] + u[1]) {
      const rest = u[1] * (u[2] - 1);
      const pattern = '(' + p.text.slice(u[0], u[0] + u[1]).join(' -> ') + ' ->) x' + u[2];
      ol.append(el('li', { class: 'fold' }, '\u2026 ' + pattern + ': ' + num(rest) + ' more objects'));
      i += rest;
      r++;
    }
  }
  return ol;
}

// ---- views ----

async function viewOverview() {
  const o = OVERVIEW = await api('overview');
  const t = o.totals;
  const nodes = [el('h1', {}, 'Overview of ', el('code', {}, o.dump))];
  nodes.push(kv([
    ['Ruby', o.ruby],
    ['objects', t.objects, 'ov-objects'],
    ['memsize', t.memsize, 'ov-memsize'],
    ['references', t.references, 'ov-references'],
    ['roots', t.roots, 'ov-roots'],
    ['generations', t.generations ? t.generations[0] + '..' + t.generations[1] : 'not traced'],
    ['reached from the roots', num(o.reached.count) + ' objects, ' + bytes(o.reached.memsize)],
    t.excluded ? ['left out', num(t.excluded) + ' objects of the allocation tracer and dump_all'] : null,
    ['reference names', o.ref_names ? 'yes' : 'no'],
  ], 'ov-totals'));
  if (o.process) {
    const p = o.process;
    nodes.push(el('h2', {}, 'Process'));
    nodes.push(kv([['pid', String(p.pid)], ['RSS', bytes(p.rss)], ['Ruby heap (memsize)', bytes(p.objects_memsize) + (p.rss ? ' (' + (100 * p.objects_memsize / p.rss).toFixed(1) + '% of RSS)' : '')],
      p.memsize_of_all !== undefined ? ['memsize_of_all', bytes(p.memsize_of_all)] : null,
      p.malloc_in_use !== undefined ? ['malloc in use', bytes(p.malloc_in_use)] : null], 'ov-process'));
  }
  if (o.memory) {
    // where each dump's RSS goes (heapdump memory's split)
    const m = o.memory;
    const cell = v => v === null ? '–' : el('span', { 'data-bytes': String(v) }, bytes(v));
    nodes.push(el('h2', {}, 'Where the RSS goes'));
    nodes.push(table([{ label: 'part' }, ...m.dumps.map(d => ({ label: d.dump, num: 1 }))],
      [['RSS', ...m.dumps.map(d => cell(d.rss))],
        ...m.buckets.map((b, i) => [b.label, ...m.dumps.map(d => cell(d.bytes[i]))])], { id: 'ov-memory' }));
  }
  nodes.push(el('h2', {}, 'By type'));
  nodes.push(table([{ label: 'type' }, { label: 'count', num: 1 }, { label: 'memsize', num: 1 }],
    o.by_type.map(r => [link('/group', { by: 'type', key: r.type }, r.type), num(r.count), num(r.memsize)]), { id: 'ov-types' }));
  nodes.push(el('h2', {}, 'Roots'));
  nodes.push(table([{ label: 'category' }, { label: 'objects', num: 1 }], o.roots_by_category.map(r => [r.name, num(r.count)])));
  show(...nodes);
}

const GROUPS = ['type', 'class', 'file', 'location', 'gem', 'generation', 'imemo'];

async function viewGroups(ps) {
  const by = ps.get('by') || 'class', sort = ps.get('sort') || 'count', order = ps.get('order') || 'desc';
  const filter = ps.get('filter') || '', offset = Number(ps.get('offset') || 0);
  const j = await api('stats', { by, sort, order, filter, offset, limit: PAGE });
  const nav = (over) => {
    const q = { by, sort, order, filter, offset: 0, ...over };
    location.hash = '#/groups?' + new URLSearchParams(q).toString();
  };
  const tabs = el('div', { class: 'tabs' }, ...GROUPS.map(g => {
    const a = link('/groups', { by: g }, g, 'tab-' + g);
    if (g === by) a.className = 'active';
    return a;
  }));
  const f = el('input', { id: 'filter', type: 'search', placeholder: 'filter ' + by, value: filter });
  const form = el('form', {}, f, el('button', { type: 'submit' }, 'Filter'));
  form.addEventListener('submit', e => { e.preventDefault(); nav({ filter: f.value }); });
  const head = [{ label: by, sort: 'key' }, { label: 'count', num: 1, sort: 'count' }, { label: 'memsize', num: 1, sort: 'memsize' }];
  if (by === 'class') head.push({ label: 'retained', num: 1, sort: 'retained' });
  const rows = j.rows.map(r => {
    const c = [link('/group', { by, key: r.key }, r.key), num(r.count), num(r.memsize)];
    if (by === 'class') c.push(r.retained_memsize === undefined ? '' : num(r.retained_memsize));
    return c;
  });
  const t = table(head, rows, { id: 'groups', onsort: s => nav({ sort: s, order: s === sort && order === 'desc' ? 'asc' : 'desc' }) });
  show(el('h1', {}, 'Groups by ' + by), tabs, form,
    el('p', { class: 'muted' }, num(j.rows_matched) + ' of ' + num(j.rows_total) + ' groups, by ' + j.sort + ' (' + j.order + ')'),
    pager(j.rows_matched, offset, PAGE, o => nav({ offset: o })), t);
}

function objectRows(list) {
  return list.map(o => [objLink(o), o.label, o.type, num(o.memsize), num(o.retained_memsize), site(o)]);
}
const OBJ_HEAD = [{ label: 'address' }, { label: 'class' }, { label: 'type' }, { label: 'memsize', num: 1 }, { label: 'retained', num: 1 }, { label: 'allocated at' }];

async function viewGroup(ps) {
  const by = ps.get('by'), key = ps.get('key'), offset = Number(ps.get('offset') || 0);
  const j = await api('objects', { by, key, offset, limit: PAGE });
  show(el('h1', {}, by + ' ', el('code', {}, key)),
    pager(j.total, offset, PAGE, o => { location.hash = '#/group?' + new URLSearchParams({ by, key, offset: o }).toString(); }),
    table(OBJ_HEAD, objectRows(j.objects), { id: 'objects' }));
}

async function viewObject(ps) {
  const address = ps.get('address'), offset = Number(ps.get('offset') || 0);
  const j = await api('object', { address, offset, limit: 100 });
  const o = j.object;
  const nodes = [el('h1', {}, o.label + ' ', el('code', { id: 'obj-address' }, o.address))];
  nodes.push(kv([['type', o.type], ['class', o.class], o.aux !== undefined ? ['detail', o.aux] : null,
    ['memsize', o.memsize], ['retained', num(o.retained_count) + ' objects, ' + num(o.retained_memsize) + ' bytes'],
    o.generation !== undefined ? ['generation', String(o.generation)] : null,
    o.length !== undefined ? ['length', o.length] : null,
    o.file ? ['allocated at', site(o)] : null, ['flags', o.flags.join(' ') || '-']], 'obj-fields'));
  nodes.push(el('p', {}, link('/graph', { address: o.address }, 'drawing of its path and neighbours', 'obj-graph-link'),
    o.dominated ? ' · ' : null, o.dominated ? link('/treemap', { root: o.address }, 'treemap of what it retains', 'obj-treemap-link') : null));
  nodes.push(el('h2', {}, 'Retention path from the roots'));
  nodes.push(j.path ? pathList(j.path, 'obj-path') : el('p', { class: 'muted', id: 'obj-path' }, j.path_error || 'no path'));
  nodes.push(el('h2', {}, 'Dominators (each alone keeps the next alive)'));
  if (j.dominators) {
    const ol = el('ol', { class: 'path', id: 'obj-dominators' });
    // folded as the path is (runs: [start, period, count])
    const runs = j.dominators.runs || [], chain = j.dominators.chain;
    let r = 0;
    for (let i = 0; i < chain.length; i++) {
      const d = chain[i];
      ol.append(el('li', {}, objLink(d), ' ', d.label, ' ', el('span', { class: 'muted' }, 'retains ' + bytes(d.retained_memsize))));
      const u = runs[r];
      if (u && i + 1 === u[0] + u[1]) {
        const rest = u[1] * (u[2] - 1);
        const pattern = '(' + chain.slice(u[0], u[0] + u[1]).map(x => x.label).join(' -> ') + ' ->) x' + u[2];
        ol.append(el('li', { class: 'fold' }, '\u2026 ' + pattern + ': ' + num(rest) + ' more objects'));
        i += rest;
        r++;
      }
    }
    nodes.push(ol);
  } else nodes.push(el('p', { class: 'muted' }, 'no root reaches it'));
  const edges = (list) => list.map(e => [objLink(e.object), e.ref || '', e.object.label, num(e.object.memsize), num(e.object.retained_memsize)]);
  const EH = [{ label: 'address' }, { label: 'reference' }, { label: 'class' }, { label: 'memsize', num: 1 }, { label: 'retained', num: 1 }];
  nodes.push(el('h2', {}, 'References (' + num(j.refs_total) + ')'));
  nodes.push(table(EH, edges(j.refs), { id: 'obj-refs' }));
  nodes.push(el('h2', {}, 'Referrers (' + num(j.referrers_total) + ')'));
  nodes.push(table(EH, edges(j.referrers), { id: 'obj-referrers' }));
  const most = Math.max(j.refs_total, j.referrers_total);
  if (most > 100) nodes.push(pager(most, offset, 100, off => { location.hash = '#/object?' + new URLSearchParams({ address, offset: off }).toString(); }));
  show(...nodes);
}

function treeItem(o, total) {
  const li = el('li', { 'data-address': o.address });
  const pct = total ? Math.max(1, Math.round(100 * o.retained_memsize / total)) : 0;
  const tog = el('button', { class: 'tog', disabled: o.dominated ? null : 'disabled' }, o.dominated ? '+' : '·');
  let open = false, sub = null;
  tog.addEventListener('click', async () => {
    if (open) { sub.remove(); tog.textContent = '+'; open = false; return; }
    tog.textContent = '…';
    sub = el('ul', {});
    await loadKids(sub, o.address, 0, total);
    li.append(sub);
    tog.textContent = '−';
    open = true;
  });
  li.append(tog, ' ', objLink(o), ' ', el('span', { class: 'name' }, o.label), ' ',
    el('span', { class: 'bar', style: null, 'data-pct': String(pct) }), ' ',
    el('span', { class: 'muted' }, bytes(o.retained_memsize) + ' retained, ' + num(o.dominated) + ' dominated'));
  // the bar's width from a number, never from dump text
  li.querySelector('.bar').style.width = (pct * 3) + 'px';
  return li;
}

async function loadKids(ul, node, offset, total) {
  const j = await api('domtree', { node: node || 'root', offset, limit: PAGE });
  j.children.forEach(c => ul.append(treeItem(c, total)));
  if (offset + j.children.length < j.total) {
    const more = el('li', {}, el('button', { class: 'more' }, 'more (' + num(j.total - offset - j.children.length) + ')'));
    more.firstChild.addEventListener('click', async () => { more.remove(); await loadKids(ul, node, offset + PAGE, total); });
    ul.append(more);
  }
  return j;
}

async function viewDomtree() {
  const root = await api('domtree', { node: 'root', limit: 0 });
  const ul = el('ul', {});
  const div = el('div', { class: 'tree', id: 'domtree' }, ul);
  show(el('h1', {}, 'Dominator tree'),
    el('p', { class: 'muted' }, num(root.reached_count) + ' objects reached, ' + bytes(root.reached_memsize) + '; ' + num(root.total) + ' held by no single object, largest retained first'), div);
  await loadKids(ul, 'root', 0, root.reached_memsize);
}

async function viewLeaks(ps) {
  const offset = Number(ps.get('offset') || 0);
  const j = await api('leaks', { offset, limit: 20 });
  const t = j.totals;
  const nodes = [el('h1', {}, 'Leak suspects'),
    el('p', { class: 'verdict', id: 'leak-verdict' }, 'Verdict: ' + j.verdict.text),
    kv([['leak', num(t.leak_count) + ' objects, ' + num(t.leak_memsize) + ' bytes'], ['border objects', t.border], ['suspects', t.groups, 'leak-groups'], t.folded ? ['folded', num(t.folded) + ' small groups'] : null], 'leak-totals'),
    pager(t.groups, offset, 20, o => { location.hash = '#/leaks?offset=' + o; })];
  // the process grew outside its Ruby heap (the gem's sidecars): first
  if (j.process && j.process.outside_ruby) nodes.splice(1, 0, el('p', { class: 'outside-ruby', id: 'process-growth' }, j.process.text));
  j.suspects.forEach(s => {
    const who = s.holder || s.first_border;
    const sec = el('section', { class: 'suspect', id: 'suspect-' + s.rank });
    sec.append(el('h2', {}, '#' + s.rank + ' ', objLink(who, 'suspect-link-' + s.rank), ' ', who.label, ' ',
      el('span', { class: 'muted' }, (100 * s.share).toFixed(1) + '% of the leak')));
    sec.append(kv([[s.holder ? 'held by one old object' : s.kind === 'joint' ? 'held jointly by' : 'held by', s.holder ? s.holder.label : num(s.holder_count) + (s.kind === 'joint' ? ' holders together' : ' objects and ' + num(s.root_count) + ' root categories')],
      ['new objects on the border', s.border_count], ['retained', num(s.retained_count) + ' objects, ' + num(s.retained_memsize) + ' bytes']]));
    sec.append(el('h3', {}, 'Path'));
    sec.append(pathList(s.path, 'suspect-path-' + s.rank));
    sec.append(el('p', {}, link('/graph', { suspect: s.rank }, 'drawing (Graphviz)', 'suspect-graph-link-' + s.rank)));
    nodes.push(sec);
  });
  if (j.clusters && j.clusters.length) {
    nodes.push(el('h2', {}, 'Clusters: suspects held the same way'));
    nodes.push(table([{ label: 'rank', num: 1 }, { label: 'suspects', num: 1 }, { label: 'retained bytes', num: 1 }, { label: 'share' }, { label: 'shape' }],
      j.clusters.map(c => [c.rank, num(c.suspects), num(c.retained_memsize), (100 * c.share).toFixed(1) + '%', c.shape || 'no GC root reaches them']),
      { id: 'leak-clusters' }));
  }
  show(...nodes);
}

async function viewDiff(ps) {
  const offset = Number(ps.get('offset') || 0);
  const j = await api('diff', { offset, limit: PAGE });
  show(el('h1', {}, 'Diff'),
    kv([['before', j.before], ['after', j.after], j.later ? ['later', j.later] : null,
      ['new in after', num(j.new.count) + ' objects, ' + num(j.new.memsize) + ' bytes'],
      j.retained ? ['still alive in later', num(j.retained.count) + ' objects, ' + num(j.retained.memsize) + ' bytes'] : null,
      ['uncertain matches', j.uncertain]], 'diff-totals'),
    el('h2', {}, 'Classes of the ' + j.classes_of + ' objects'),
    pager(j.rows_total, offset, PAGE, o => { location.hash = '#/diff?offset=' + o; }),
    table([{ label: 'class' }, { label: 'count', num: 1 }, { label: 'memsize', num: 1 }], j.rows.map(r => [r.key, num(r.count), num(r.memsize)]), { id: 'diff-classes' }));
}

async function viewSearch(ps) {
  const q = ps.get('q') || '';
  document.getElementById('search').value = q;
  const j = await api('search', { q, limit: 20 });
  const nodes = [el('h1', {}, 'Search ', el('code', {}, q))];
  if (j.address) nodes.push(el('h2', {}, 'Object'), table(OBJ_HEAD, objectRows([j.address]), { id: 'search-address' }));
  nodes.push(el('h2', {}, 'Classes (' + num(j.classes.matched) + ')'));
  nodes.push(table([{ label: 'class' }, { label: 'count', num: 1 }, { label: 'memsize', num: 1 }], j.classes.rows.map(r => [link('/group', { by: 'class', key: r.key }, r.key), num(r.count), num(r.memsize)]), { id: 'search-classes' }));
  nodes.push(el('h2', {}, 'Allocation sites (' + num(j.sites.matched) + ')'));
  nodes.push(table([{ label: 'site' }, { label: 'count', num: 1 }, { label: 'memsize', num: 1 }], j.sites.rows.map(r => [link('/group', { by: 'location', key: r.key }, r.key), num(r.count), num(r.memsize)]), { id: 'search-sites' }));
  nodes.push(el('h2', {}, 'String values (' + num(j.strings.matched) + (j.strings.more ? '+' : '') + ')'));
  if (j.strings.unavailable) nodes.push(el('p', { class: 'muted' }, j.strings.unavailable));
  nodes.push(table([{ label: 'value' }, { label: 'copies', num: 1 }, { label: 'bytesize', num: 1 }, { label: 'a copy' }], j.strings.rows.map(r => [el('code', {}, r.value), num(r.count), num(r.bytesize), r.object ? objLink(r.object) : '']), { id: 'search-strings' }));
  show(...nodes);
}

const ROUTES = {
  '/overview': viewOverview, '/groups': viewGroups, '/group': viewGroup, '/object': viewObject,
  '/domtree': viewDomtree, '/leaks': viewLeaks, '/diff': viewDiff, '/search': viewSearch,
  '/treemap': viewTreemap, '/graph': viewGraph,
  '/flame': viewFlame,
};

// One view at a time: a route that starts while another is still
// loading waits for it, so a slow view (the overview at start) can never
// finish after a newer one and put its page under the newer address.
let ROUTING = Promise.resolve();
function route() {
  ROUTING = ROUTING.then(routeNow, routeNow);
  return ROUTING;
}

async function routeNow() {
  const { route, params } = hashParams();
  const fn = ROUTES[route] || viewOverview;
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.getAttribute('href').split('?')[0] === '#' + route);
  document.body.setAttribute('data-view', '');
  try {
    await fn(params);
    document.body.setAttribute('data-view', route || '/overview');
  } catch (e) {
    show(el('p', { class: 'err', id: 'error' }, String(e.message || e)));
    document.body.setAttribute('data-view', 'error');
  }
}

async function start() {
  document.getElementById('search-form').addEventListener('submit', e => {
    e.preventDefault();
    location.hash = '#/search?' + new URLSearchParams({ q: document.getElementById('search').value }).toString();
  });
  try {
    const o = await api('overview');
    for (const a of document.querySelectorAll('.diffonly')) a.classList.toggle('hidden', !o.diff);
    document.getElementById('foot').textContent = o.dumps.join(' · ');
  } catch (e) { /* the view says it */ }
  window.addEventListener('hashchange', route);
  route();
}

start();
