// heapdump serve: the drawings of the page (loaded before app.js, whose
// helpers they call): the treemap of retained size (/api/treemap, drawn
// here as SVG elements) and the Graphviz drawing of a leak suspect or an
// object (/api/graph.svg, shown as an image). Every string from the dump
// goes into the page as a text node, never as markup.
'use strict';

// The SVG namespace, from the page's own <template> (no URL in the code).
function svgNS() { return document.getElementById('svg-proto').content.firstElementChild.namespaceURI; }

function sel(tag, attrs, ...kids) {
  const e = document.createElementNS(svgNS(), tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) e.setAttribute(k, String(v));
  for (const k of kids) e.append(typeof k === 'object' ? k : document.createTextNode(visible(String(k))));
  return e;
}

// ---- the treemap ----

// Squarified treemap (Bruls, Huizing, van Wijk): the values (largest
// first) as rectangles filling x, y, w, h, each as near a square as the
// order allows. Returns one {x, y, w, h} per value.
function squarify(vals, x, y, w, h) {
  const total = vals.reduce((a, b) => a + b, 0);
  const out = [];
  if (!(total > 0) || w <= 0 || h <= 0) return vals.map(() => ({ x, y, w: 0, h: 0 }));
  const areas = vals.map(v => v * w * h / total);
  const worst = (row, s) => {
    const sum = row.reduce((a, b) => a + b, 0), mx = Math.max(...row), mn = Math.min(...row);
    return Math.max(s * s * mx / (sum * sum), sum * sum / (s * s * mn));
  };
  let i = 0;
  while (i < areas.length) {
    const side = Math.min(w, h);
    let row = [areas[i]], j = i + 1, wr = worst(row, side);
    while (j < areas.length && areas[j] > 0) {
      const next = row.concat(areas[j]), wn = worst(next, side);
      if (wn > wr) break;
      row = next; wr = wn; j++;
    }
    const sum = row.reduce((a, b) => a + b, 0);
    if (w >= h) {
      const cw = sum / h;
      let yy = y;
      for (const a of row) { out.push({ x, y: yy, w: cw, h: a / cw }); yy += a / cw; }
      x += cw; w -= cw;
    } else {
      const rh = sum / w;
      let xx = x;
      for (const a of row) { out.push({ x: xx, y, w: a / rh, h: rh }); xx += a / rh; }
      y += rh; h -= rh;
    }
    i = j;
  }
  return out;
}

const TYPE_COLOURS = {
  OBJECT: '#8dd3c7', STRING: '#ffffb3', ARRAY: '#bebada', HASH: '#fb8072', CLASS: '#80b1d3',
  MODULE: '#fdb462', ICLASS: '#b3de69', DATA: '#fccde5', IMEMO: '#d9d9d9', STRUCT: '#bc80bd',
  SYMBOL: '#ccebc5', BIGNUM: '#ffed6f', FLOAT: '#ffed6f', REGEXP: '#c7eae5', MATCH: '#c7eae5',
  RATIONAL: '#ffed6f', COMPLEX: '#ffed6f', FILE: '#e5c494', ROOT: '#f4a582',
};
function typeColour(t) { return TYPE_COLOURS[t] || '#cccccc'; }

function nodeTitle(n) {
  return (n.label || '') + (n.ref ? ' (' + n.ref + ')' : '') + '\n' + (n.address || '') +
    ' ' + (n.type || '') + ' ' + (n.class || '') + '\nretains ' + num(n.retained_memsize) + ' bytes in ' +
    num(n.retained_count) + ' objects; itself ' + num(n.memsize) + ' bytes; dominates ' + num(n.dominated);
}

// A label cut to the characters that fit in w pixels.
function fit(s, w) {
  const n = Math.floor((w - 6) / 6.5);
  s = visible(s);
  return n <= 0 ? '' : s.length > n ? s.slice(0, Math.max(0, n - 1)) + '…' : s;
}

// Lays node's children out in the box and appends one <g> per drawn
// child to svg (parents before children: the deepest is on top), down
// the levels the server sent. Iterative: a stack of boxes.
function drawTreemap(svg, root, W, H) {
  const stack = [{ node: root, x: 0, y: 0, w: W, h: H, depth: 0 }];
  while (stack.length) {
    const { node, x, y, w, h, depth } = stack.pop();
    const kids = node.children || [];
    const vals = kids.map(k => k.retained_memsize);
    if (node.folded) vals.push(node.folded.retained_memsize);
    // what the node keeps of its own: room no child takes
    const own = Math.max(0, node.retained_memsize - vals.reduce((a, b) => a + b, 0));
    vals.push(own);
    const rects = squarify(vals, x, y, w, h);
    kids.forEach((k, i) => {
      const r = rects[i];
      if (r.w < 1 || r.h < 1) return;
      const g = sel('g', { class: 'tm-node', 'data-address': k.address, 'data-retained': k.retained_memsize, 'data-depth': depth + 1, 'data-dominated': k.dominated });
      g.append(sel('title', {}, nodeTitle(k)));
      g.append(sel('rect', { x: r.x.toFixed(1), y: r.y.toFixed(1), width: r.w.toFixed(1), height: r.h.toFixed(1), fill: typeColour(k.type), 'fill-opacity': Math.max(0.35, 1 - 0.2 * depth).toFixed(2) }));
      if (r.w > 40 && r.h > 14) {
        const t = (k.label || '') + (k.ref ? ' ' + k.ref : '') + ' ' + bytes(k.retained_memsize);
        g.append(sel('text', { x: (r.x + 3).toFixed(1), y: (r.y + 11).toFixed(1) }, fit(t, r.w)));
      }
      g.addEventListener('click', ev => {
        ev.stopPropagation();
        location.hash = k.dominated ? '#/treemap?' + new URLSearchParams({ root: k.address }).toString()
          : '#/object?' + new URLSearchParams({ address: k.address }).toString();
      });
      svg.append(g);
      // its children below its label
      if (k.children && k.children.length && r.w > 24 && r.h > 30)
        stack.push({ node: k, x: r.x + 2, y: r.y + 15, w: r.w - 4, h: r.h - 17, depth: depth + 1 });
    });
    if (node.folded) {
      const r = rects[kids.length];
      if (r.w >= 1 && r.h >= 1) {
        const g = sel('g', { class: 'tm-folded', 'data-count': node.folded.count, 'data-retained': node.folded.retained_memsize, 'data-depth': depth + 1 });
        const t = '(' + num(node.folded.count) + ' smaller) ' + bytes(node.folded.retained_memsize);
        g.append(sel('title', {}, t));
        g.append(sel('rect', { x: r.x.toFixed(1), y: r.y.toFixed(1), width: r.w.toFixed(1), height: r.h.toFixed(1) }));
        if (r.w > 40 && r.h > 14) g.append(sel('text', { x: (r.x + 3).toFixed(1), y: (r.y + 11).toFixed(1) }, fit(t, r.w)));
        svg.append(g);
      }
    }
  }
}

async function viewTreemap(ps) {
  const root = ps.get('root') || 'root';
  const depth = ps.get('depth') || '3', share = ps.get('min_share') || '0.5';
  const j = await api('treemap', { root, depth, min_share: share });
  const r = j.root;
  const crumbs = el('nav', { class: 'crumbs', id: 'tm-crumbs' }, link('/treemap', {}, '(roots)', 'tm-crumb-roots'));
  for (const c of j.chain) crumbs.append(' › ', link('/treemap', { root: c.address }, c.label + ' ' + bytes(c.retained_memsize)));
  if (r.address) crumbs.append(' › ', el('strong', {}, r.label));
  const up = j.chain.length ? j.chain[j.chain.length - 1].address : null;
  const upBtn = el('button', { id: 'tm-up', disabled: r.address ? null : 'disabled' }, '↑ up');
  upBtn.addEventListener('click', () => { location.hash = up ? '#/treemap?' + new URLSearchParams({ root: up }).toString() : '#/treemap'; });
  const W = Math.max(480, Math.min(1400, main().clientWidth - 40)), H = Math.round(W * 0.55);
  const svg = sel('svg', { id: 'treemap', class: 'treemap', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img' });
  drawTreemap(svg, r, W, H);
  const head = r.address
    ? el('p', {}, objLink(r, 'tm-root-link'), ' ', r.label, ' ', el('span', { class: 'muted' }, 'retains ' + num(r.retained_memsize) + ' bytes in ' + num(r.retained_count) + ' objects'))
    : el('p', { class: 'muted' }, num(r.retained_count) + ' objects reached from the roots, ' + bytes(r.retained_memsize));
  const rows = (r.children || []).map(k => [objLink(k), k.label, k.ref || '', k.type, num(k.retained_memsize), num(k.dominated)]);
  if (r.folded) rows.push(['', '(' + num(r.folded.count) + ' smaller)', '', '', num(r.folded.retained_memsize), '']);
  show(el('h1', {}, 'Treemap of retained size'), crumbs, el('p', {}, upBtn, ' ',
    el('span', { class: 'muted' }, 'each rectangle is an object, sized by what it alone keeps alive; the ones inside it are what it dominates (' +
      j.depth + ' levels, down to ' + j.min_share + '% of this one). Click one to zoom into it.')),
  head, svg, el('h2', {}, 'Largest retainers here'),
  table([{ label: 'address' }, { label: 'class' }, { label: 'reference' }, { label: 'type' }, { label: 'retained', num: 1 }, { label: 'dominated', num: 1 }], rows, { id: 'tm-children' }));
}

// ---- the Graphviz drawing ----

// The objects of a Graphviz SVG and where they are, from the text parsed
// as an inert document (nothing of it enters the page): each node's
// address (its label's last line), name and bounding box in the image's
// pixels at scale k.
function graphNodes(text) {
  const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
  const svg = doc.documentElement;
  const vb = (svg.getAttribute('viewBox') || '').split(/[ ,]+/).map(Number);
  const g0 = doc.querySelector('g.graph');
  const tr = /translate\(([-\d.]+)[ ,]+([-\d.]+)\)/.exec(g0 ? g0.getAttribute('transform') || '' : '');
  const tx = tr ? Number(tr[1]) : 0, ty = tr ? Number(tr[2]) : 0;
  const nodes = [];
  for (const g of doc.querySelectorAll('g.node')) {
    const texts = [...g.querySelectorAll('text')].map(t => t.textContent);
    const addr = texts.find(t => /^0x[0-9a-f]+$/.test(t));
    if (!addr) continue;
    const xs = [], ys = [];
    for (const s of g.querySelectorAll('path, polygon')) {
      const ns = (s.getAttribute('d') || s.getAttribute('points') || '').match(/-?\d+(\.\d+)?/g) || [];
      for (let i = 0; i + 1 < ns.length; i += 2) { xs.push(Number(ns[i])); ys.push(Number(ns[i + 1])); }
    }
    for (const e of g.querySelectorAll('ellipse')) {
      const cx = Number(e.getAttribute('cx')), cy = Number(e.getAttribute('cy')), rx = Number(e.getAttribute('rx')), ry = Number(e.getAttribute('ry'));
      xs.push(cx - rx, cx + rx); ys.push(cy - ry, cy + ry);
    }
    if (!xs.length) continue;
    nodes.push({ address: addr, name: texts.filter(t => t !== addr).join(' '), box: [Math.min(...xs) + tx, Math.min(...ys) + ty, Math.max(...xs) + tx, Math.max(...ys) + ty] });
  }
  return { width: vb[2] || 0, height: vb[3] || 0, nodes };
}

function b64utf8(s) {
  const b = new TextEncoder().encode(s);
  let bin = '';
  for (let i = 0; i < b.length; i += 0x8000) bin += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(bin);
}

async function viewGraph(ps) {
  const q = new URLSearchParams();
  for (const k of ['suspect', 'address', 'depth', 'near']) if (ps.get(k)) q.set(k, ps.get(k));
  q.set('token', TOKEN);
  const r = await fetch('/api/graph.svg?' + q.toString(), { cache: 'no-store' });
  if (!r.ok) { let m = r.statusText; try { m = (await r.json()).error; } catch (e) { /* not JSON */ } throw new Error(m); }
  const text = await r.text();
  const info = graphNodes(text);
  // The drawing is an image: whatever its text holds, an <img> runs no
  // script, loads nothing and reaches no part of the page. The links to
  // the objects are an image map made here from addresses and numbers.
  const k = 4 / 3; // points to CSS pixels
  const img = el('img', { id: 'graph-img', alt: 'Graphviz drawing', usemap: '#graph-map', src: 'data:image/svg+xml;base64,' + b64utf8(text) });
  img.width = Math.round(info.width * k);
  img.height = Math.round(info.height * k);
  const map = el('map', { name: 'graph-map', id: 'graph-map' });
  const list = el('ul', { id: 'graph-objects' });
  for (const n of info.nodes) {
    const c = n.box.map(v => Math.round(v * k));
    const a = el('area', { shape: 'rect', coords: c.join(','), href: '#/object?' + new URLSearchParams({ address: n.address }).toString(), 'data-address': n.address });
    a.setAttribute('alt', n.address);
    a.setAttribute('title', visible(n.name + ' ' + n.address));
    map.append(a);
    list.append(el('li', {}, link('/object', { address: n.address }, n.address), ' ', n.name));
  }
  const title = ps.get('suspect') ? ['Drawing of leak suspect #' + ps.get('suspect'), link('/leaks', {}, 'all suspects')]
    : ['Drawing of ', el('code', {}, ps.get('address')), ' (its path from the roots and its neighbours)', link('/object', { address: ps.get('address') }, 'its page')];
  show(el('h1', {}, ...title.slice(0, -1)), el('p', {}, title[title.length - 1], ' · ',
    el('span', { class: 'muted' }, 'laid out by Graphviz; click an object to open it')),
  el('div', { class: 'graph' }, img, map), el('h2', {}, 'Objects in the drawing (' + num(info.nodes.length) + ')'), list);
  await img.decode().catch(() => {});
}

// ---- the flame graph (icicle) ----

// /api/flame drawn top down: a row a level, each frame as wide as its
// total (its objects' retained size by path); a click zooms into a frame,
// the crumbs go back up.
function drawIcicle(svg, root, W, rowH) {
  const stack = [{ node: root, x: 0, w: W, depth: 0 }];
  while (stack.length) {
    const { node, x, w, depth } = stack.pop();
    const g = sel('g', { class: 'fl-frame', 'data-id': node.id, 'data-total': node.total, 'data-depth': depth });
    const label = (node.name || '(all)') + ' ' + (node.unit === 'objects' ? num(node.total) : bytes(node.total));
    g.append(sel('title', {}, label + ' (self ' + num(node.self) + ')'));
    g.append(sel('rect', { x: x.toFixed(1), y: depth * rowH, width: Math.max(0.5, w - 0.5).toFixed(1), height: rowH - 1 }));
    if (w > 30) g.append(sel('text', { x: (x + 3).toFixed(1), y: depth * rowH + rowH - 6 }, fit(label, w)));
    if (depth) g.addEventListener('click', () => { location.hash = '#/flame?' + new URLSearchParams({ by: node.by, metric: node.metric, frame: node.id }).toString(); });
    svg.append(g);
    let cx = x;
    for (const k of node.children || []) {
      const kw = node.total ? w * k.total / node.total : 0;
      k.unit = node.unit; k.by = node.by; k.metric = node.metric;
      if (kw >= 0.5) stack.push({ node: k, x: cx, w: kw, depth: depth + 1 });
      cx += kw;
    }
  }
}

async function viewFlame(ps) {
  const by = ps.get('by') || 'path', metric = ps.get('metric') || 'memsize', frame = ps.get('frame') || '0';
  const j = await api('flame', { by, metric, frame, depth: ps.get('depth') || '8' });
  const r = j.root;
  r.unit = j.unit; r.by = by; r.metric = metric;
  let levels = 0;
  for (const st = [[r, 1]]; st.length;) { const [n, d] = st.pop(); levels = Math.max(levels, d); for (const k of n.children || []) st.push([k, d + 1]); }
  const crumbs = el('nav', { class: 'crumbs', id: 'fl-crumbs' }, link('/flame', { by, metric }, '(all)', 'fl-crumb-all'));
  for (const c of j.chain) crumbs.append(' › ', link('/flame', { by, metric, frame: c.id }, c.name));
  if (r.id) crumbs.append(' › ', el('strong', {}, r.name));
  const W = Math.max(480, Math.min(1400, main().clientWidth - 40)), rowH = 20;
  const svg = sel('svg', { id: 'flame', class: 'flame', width: W, height: levels * rowH, viewBox: '0 0 ' + W + ' ' + levels * rowH, role: 'img' });
  drawIcicle(svg, r, W, rowH);
  // the other views: by allocation stack only when the dump has stacks
  const views = [['path', 'by retention path'], ['site', 'by allocation site']];
  if (j.stacks || by === 'stack') views.push(['stack', 'by allocation stack']);
  const others = [];
  for (const [b, text] of views) if (b !== by) others.push(link('/flame', { by: b, metric }, text, 'fl-by-' + b), ' · ');
  const m = metric === 'memsize' ? link('/flame', { by, metric: 'count' }, 'count objects', 'fl-count') : link('/flame', { by, metric: 'memsize' }, 'bytes', 'fl-memsize');
  const titles = { path: 'Flame graph of retention paths', site: 'Flame graph of allocation sites', stack: 'Flame graph of allocation stacks' };
  const what = {
    path: 'each frame is the objects of one name under the frame of what alone keeps them alive (the dominator tree), as wide as what they retain; ',
    site: 'one frame a site, as wide as what was allocated there; ',
    stack: 'each frame a method of the Ruby call stacks that allocated the objects (recorded by HeapDump.trace(stacks: true)), the outermost on top, as wide as what was allocated under it; ',
  };
  show(el('h1', {}, titles[by] || titles.path), crumbs,
    el('p', { class: 'muted' }, (what[by] || what.path) + 'frames under ' + j.min_share + '% of this one are left out. Click one to zoom into it. ', ...others, m),
    el('p', {}, (j.unit === 'objects' ? num(r.total) + ' objects' : bytes(r.total)) + ' here, of ' + (j.unit === 'objects' ? num(j.total) + ' objects' : bytes(j.total))),
    svg, r.id ? await flameObjects(by, metric, r.id) : '');
}

// The objects under a frame (/api/flame?objects=1), links to their pages.
async function flameObjects(by, metric, frame) {
  const o = await api('flame', { by, metric, frame, objects: '1' });
  const ul = el('ul', { id: 'fl-objects' });
  for (const x of o.objects) ul.append(el('li', {}, objLink(x), ' ', x.label, ' ', el('span', { class: 'muted' }, bytes(x.memsize))));
  return el('section', {}, el('h2', {}, 'Objects of this frame'),
    el('p', { id: 'fl-objects-count', 'data-count': o.count }, num(o.count) + ' objects' + (o.count > o.objects.length ? ', the first ' + num(o.objects.length) + ' listed' : '')), ul);
}
