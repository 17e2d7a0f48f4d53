// kubefake's live view. It reads the server as any client does: aggregated discovery, then a
// list and a `?watch=1` stream of the resource picked (read with fetch() and a ReadableStream,
// resumed from the last resourceVersion, relisted after a 410), and GETs of the object picked
// as YAML (`Accept: application/yaml`, rendered by the server). The request log and the fault
// rules come from kubefake's own /kubefake/v1/requests and /kubefake/v1/faults, polled.
// Everything is written into the DOM as text (textContent), never as HTML.
'use strict';

// The server's root as this page sees it: "/" directly, or a prefix behind a proxy.
const ROOT = location.pathname.replace(/kubefake\/v1\/ui\/?[^/]*$/, '');
const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const POLL_MS = 1000; // how often the request log and the faults are read
const KEEP_EVENTS = 200; // watch events shown
const KEEP_REQUESTS = 200; // requests shown

const view = {
  resources: [], // {group, version, resource, kind, namespaced}, from discovery
  picked: null, // the resource shown
  namespace: '', // '' = all namespaces
  objects: new Map(), // "namespace/name" -> object, as the watch keeps it
  open: null, // {namespace, name} of the object shown as YAML
  follow: null, // the AbortController of the current list+watch
  yamlSeq: 0, // only the newest YAML fetch is shown
  requestsSeen: '', // what the request table last showed, to skip needless redraws
  faultsSeen: '',
  lastWrites: null, // the newest CRD and namespace writes in the log, to notice new ones
};

const $ = (id) => document.getElementById(id);

// el('td', {className: 'x'}, 'text', child...): an element, its children text or elements.
function el(tag, props, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  for (const child of children) {
    node.append(child instanceof Node ? child : String(child ?? ''));
  }
  return node;
}

function setStatus(text, isError) {
  $('status').textContent = text;
  $('status').classList.toggle('error', Boolean(isError));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A failed request as an Error whose message is the Status message when there is one.
async function failure(resp) {
  let message = `${resp.status} ${resp.statusText}`;
  try {
    const status = await resp.json();
    if (status.message) message = `${resp.status} ${status.reason || ''}: ${status.message}`;
  } catch (_) { /* not a Status */ }
  const err = new Error(message);
  err.code = resp.status;
  return err;
}

async function request(path, options = {}) {
  const resp = await fetch(ROOT + path.replace(/^\//, ''), options);
  if (!resp.ok) throw await failure(resp);
  return resp;
}

const getJSON = async (path, accept = 'application/json', signal) =>
  (await request(path, { headers: { Accept: accept }, signal })).json();

// ---- discovery and the resource tree ----

// Every resource that can be listed and watched, from the preferred version of each group.
async function discover() {
  const [core, groups] = await Promise.all([getJSON('/api', AGGREGATED), getJSON('/apis', AGGREGATED)]);
  const resources = [];
  for (const group of [...core.items, ...groups.items]) {
    const version = group.versions[0];
    for (const r of version.resources || []) {
      const verbs = r.verbs || [];
      if (!verbs.includes('list') || !verbs.includes('watch')) continue;
      resources.push({
        group: group.metadata.name || '',
        version: version.version,
        resource: r.resource,
        kind: r.responseKind ? r.responseKind.kind : r.resource,
        namespaced: r.scope === 'Namespaced',
      });
    }
  }
  view.resources = resources;
  renderTree();
}

const resourceKey = (r) => `${r.group}/${r.version}/${r.resource}`;

function renderTree() {
  const byGroup = new Map();
  for (const r of view.resources) {
    if (!byGroup.has(r.group)) byGroup.set(r.group, []);
    byGroup.get(r.group).push(r);
  }
  // Groups keep their open or closed state; the core group starts open, and a group that
  // appears later (a new CRD's) opens, to be seen.
  const shown = [...$('tree').querySelectorAll('details')];
  const known = new Set(shown.map((d) => d.dataset.group));
  const open = new Set(shown.filter((d) => d.open).map((d) => d.dataset.group));
  const groups = [...byGroup.keys()].sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b)));
  $('tree').replaceChildren(...groups.map((group) => {
    const items = byGroup.get(group).sort((a, b) => a.resource.localeCompare(b.resource)).map((r) => {
      const button = el('button', { type: 'button', title: `${r.kind} (${r.version})` }, r.resource);
      button.dataset.key = resourceKey(r);
      button.classList.toggle('picked', view.picked !== null && resourceKey(view.picked) === resourceKey(r));
      button.addEventListener('click', () => pick(r));
      return el('li', {}, button);
    });
    const details = el('details', {}, el('summary', {}, group || 'core'), el('ul', {}, ...items));
    details.dataset.group = group;
    details.open = known.size === 0 ? group === '' : open.has(group) || !known.has(group);
    return details;
  }));
}

// ---- the view in the URL: a reload, or a link to a colleague, shows the same ----

// `#resource=apps/v1/deployments&namespace=default&name=web`.
function remember() {
  const state = new URLSearchParams();
  if (view.picked) state.set('resource', resourceKey(view.picked));
  if (view.namespace) state.set('namespace', view.namespace);
  if (view.open) state.set('name', view.open.name);
  if (view.open && view.open.namespace) state.set('objectNamespace', view.open.namespace);
  history.replaceState(null, '', `#${state}`);
}

// After discovery: what the URL names, picked and opened again.
function recall() {
  const state = new URLSearchParams(location.hash.slice(1));
  const r = view.resources.find((x) => resourceKey(x) === state.get('resource'));
  if (!r) return;
  $('namespace').value = state.get('namespace') || '';
  view.namespace = $('namespace').value; // '' when that namespace is gone
  pick(r);
  const name = state.get('name');
  if (name) openObject(r, state.get('objectNamespace') || '', name);
}

// ---- the namespace picker ----

async function loadNamespaces() {
  const list = await getJSON('/api/v1/namespaces');
  const select = $('namespace');
  const names = list.items.map((ns) => ns.metadata.name).sort();
  select.replaceChildren(el('option', { value: '' }, 'all namespaces'),
    ...names.map((name) => el('option', { value: name }, name)));
  if (view.namespace !== '' && !names.includes(view.namespace)) {
    view.namespace = ''; // it was deleted: all namespaces again
    restartFollow();
  }
  select.value = view.namespace;
}

// ---- the resource shown: list, then watch, for as long as it is picked ----

function collectionPath(r) {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const ns = r.namespaced && view.namespace ? `/namespaces/${encodeURIComponent(view.namespace)}` : '';
  return `${base}${ns}/${r.resource}`;
}

function objectPath(r, namespace, name) {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const ns = r.namespaced ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${ns}/${r.resource}/${encodeURIComponent(name)}`;
}

const objectKey = (o) => `${o.metadata.namespace || ''}/${o.metadata.name}`;

function pick(r) {
  view.picked = r;
  view.open = null;
  view.objects = new Map();
  for (const b of $('tree').querySelectorAll('button')) b.classList.toggle('picked', b.dataset.key === resourceKey(r));
  $('object-title').textContent = 'pick an object';
  $('object-yaml').textContent = '';
  $('events').replaceChildren();
  restartFollow();
  remember();
}

function restartFollow() {
  if (view.follow) view.follow.abort();
  if (!view.picked) return;
  view.follow = new AbortController();
  follow(view.picked, view.follow.signal);
}

// List, then watch from the list's resourceVersion; a watch that ends is resumed from the last
// resourceVersion it delivered; a 410 (expired, too old) lists again, as client-go's reflector.
// A server (or a fault) that ends every watch at once is not asked again in a tight loop: at
// most one list, and one watch that ended at once, a second.
async function follow(r, signal) {
  let rv = '';
  let listed = 0;
  while (!signal.aborted) {
    try {
      if (rv === '') {
        await sleep(listed + 1000 - Date.now());
        listed = Date.now();
        rv = await relist(r, signal);
      }
      setStatus(`watching ${r.resource}${r.namespaced && view.namespace ? ` in ${view.namespace}` : ''} from resourceVersion ${rv}`);
      const started = Date.now();
      rv = await watch(r, rv, signal);
      if (rv !== '' && Date.now() - started < 1000) await sleep(1000);
    } catch (err) {
      if (signal.aborted) return;
      setStatus(`${r.resource}: ${err.message}; retrying`, true);
      rv = '';
      await sleep(1000);
    }
  }
}

async function relist(r, signal) {
  const list = await getJSON(collectionPath(r), 'application/json', signal);
  if (signal.aborted) return '';
  view.objects = new Map(list.items.map((o) => [objectKey(o), o]));
  renderObjects();
  return list.metadata.resourceVersion;
}

// One watch stream, newline-delimited JSON events; answers the resourceVersion to resume from,
// or '' when the client must list again.
async function watch(r, rv, signal) {
  const query = `?watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(rv)}`;
  const resp = await fetch(ROOT + collectionPath(r).slice(1) + query, { signal });
  if (resp.status === 410) return expired();
  if (!resp.ok) throw await failure(resp);
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return rv;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      if (line === '') continue;
      const event = JSON.parse(line);
      if (event.type === 'ERROR') {
        if (event.object.code === 410) return expired();
        throw new Error(event.object.message || 'watch error');
      }
      rv = event.object.metadata.resourceVersion;
      if (event.type !== 'BOOKMARK') applyEvent(r, event);
    }
  }
}

function expired() {
  logEvent('RELIST', '410 Expired: listing again', '');
  return '';
}

function applyEvent(r, event) {
  const obj = event.object;
  const key = objectKey(obj);
  if (event.type === 'DELETED') view.objects.delete(key);
  else view.objects.set(key, obj);
  logEvent(event.type, `${obj.kind || r.kind} ${key.replace(/^\//, '')}`, obj.metadata.resourceVersion);
  scheduleRenderObjects();
  const open = view.open;
  if (open && open.namespace === (obj.metadata.namespace || '') && open.name === obj.metadata.name) {
    if (event.type === 'DELETED') $('object-yaml').classList.add('deleted');
    else refreshOpen();
  }
}

function logEvent(type, what, rv) {
  const time = new Date().toISOString().slice(11, 23);
  const item = el('li', { className: type }, `${time} `, el('b', {}, type.padEnd(8)), ` ${what}`,
    rv ? el('span', { className: 'muted' }, ` rv ${rv}`) : '');
  const list = $('events');
  list.prepend(item);
  while (list.children.length > KEEP_EVENTS) list.lastChild.remove();
}

// Many events in a burst redraw the table once, at the next frame.
let renderPending = false;
function scheduleRenderObjects() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => { renderPending = false; renderObjects(); });
}

function renderObjects() {
  const r = view.picked;
  $('objects-title').textContent = `${r.kind} (${r.group || 'core'}/${r.version}, ${view.objects.size})`;
  const rows = [...view.objects.values()]
    .sort((a, b) => objectKey(a).localeCompare(objectKey(b)))
    .map((o) => {
      const meta = o.metadata;
      const row = el('tr', {}, el('td', {}, meta.name), el('td', {}, meta.namespace || ''),
        el('td', {}, meta.resourceVersion), el('td', {}, meta.creationTimestamp || ''));
      const isOpen = view.open && view.open.name === meta.name && view.open.namespace === (meta.namespace || '');
      row.classList.toggle('picked', Boolean(isOpen));
      row.addEventListener('click', () => openObject(r, meta.namespace || '', meta.name));
      return row;
    });
  $('objects').tBodies[0].replaceChildren(...rows);
}

// ---- the object shown, as YAML from the server ----

function openObject(r, namespace, name) {
  view.open = { namespace, name };
  renderObjects();
  showObject(r, namespace, name);
  remember();
}

async function showObject(r, namespace, name) {
  const seq = ++view.yamlSeq;
  const pre = $('object-yaml');
  try {
    const resp = await request(objectPath(r, namespace, name), { headers: { Accept: 'application/yaml' } });
    const text = await resp.text();
    if (seq !== view.yamlSeq) return;
    $('object-title').textContent = `${r.kind} ${namespace ? `${namespace}/` : ''}${name}`;
    pre.classList.remove('deleted');
    pre.textContent = text;
  } catch (err) {
    if (seq === view.yamlSeq) pre.textContent = err.message;
  }
}

// An object written many times a second is read once per change seen, not once per event:
// one read at a time, and one more after it if anything changed meanwhile.
let refreshing = false;
let refreshAgain = false;
async function refreshOpen() {
  if (refreshing) {
    refreshAgain = true;
    return;
  }
  refreshing = true;
  try {
    do {
      refreshAgain = false;
      if (view.picked && view.open) await showObject(view.picked, view.open.namespace, view.open.name);
    } while (refreshAgain);
  } finally {
    refreshing = false;
  }
}

// ---- the request log and the faults, polled ----

async function pollTooling() {
  for (;;) {
    if (!document.hidden) {
      try {
        await Promise.all([loadRequests(), loadFaults()]);
      } catch (err) {
        setStatus(`kubefake API: ${err.message}`, true);
      }
    }
    await sleep(POLL_MS);
  }
}

async function loadRequests() {
  const { items } = await getJSON(`/kubefake/v1/requests?limit=${KEEP_REQUESTS * 2}`);
  noticeWrites(items);
  const hideOwn = $('hide-own').checked;
  const onlyFaults = $('only-faults').checked;
  const shown = items
    .filter((r) => !(hideOwn && r.userAgent === navigator.userAgent) && (!onlyFaults || r.fault))
    .slice(-KEEP_REQUESTS)
    .reverse();
  const seen = `${hideOwn}${onlyFaults}${shown.length}${shown.length ? shown[0].auditId : ''}`;
  if (seen === view.requestsSeen) return;
  view.requestsSeen = seen;
  $('requests').tBodies[0].replaceChildren(...shown.map(requestRow));
}

function requestRow(r) {
  const what = [r.group, r.resource, r.subresource].filter(Boolean).join('/') || r.path;
  const where = [r.namespace, r.name].filter(Boolean).join('/');
  const row = el('tr', {}, el('td', {}, r.time.slice(11, 23)), el('td', { className: 'code' }, r.code),
    el('td', {}, r.verb), el('td', { title: r.path }, where ? `${what} ${where}` : what),
    el('td', { title: r.userAgent }, r.userAgent.split(' ')[0]),
    el('td', {}, (r.latencySeconds * 1000).toFixed(1)), el('td', { className: 'fault' }, r.fault || ''));
  row.classList.toggle('failed', r.code >= 400);
  row.classList.toggle('faulted', Boolean(r.fault));
  return row;
}

// A CRD written may add or remove resources: discovery is read again; a namespace written
// may add or remove one: the picker is read again. The log tells, so nothing else is polled.
const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
function noticeWrites(items) {
  const newest = (resource) => {
    const last = items.findLast((r) => r.resource === resource && WRITES.has(r.verb) && r.code < 300);
    return last ? last.auditId : '';
  };
  const now = { crds: newest('customresourcedefinitions'), namespaces: newest('namespaces') };
  const before = view.lastWrites;
  view.lastWrites = now;
  if (before === null) return;
  if (now.crds !== before.crds) discover().catch((err) => setStatus(err.message, true));
  if (now.namespaces !== before.namespaces) loadNamespaces().catch((err) => setStatus(err.message, true));
}

async function loadFaults() {
  const { items } = await getJSON('/kubefake/v1/faults');
  const seen = JSON.stringify(items);
  if (seen === view.faultsSeen) return;
  view.faultsSeen = seen;
  $('faults').tBodies[0].replaceChildren(...items.map((f) => {
    const remove = el('button', { type: 'button', title: 'remove this rule' }, 'remove');
    remove.addEventListener('click', () =>
      request(`/kubefake/v1/faults/${encodeURIComponent(f.id)}`, { method: 'DELETE' })
        .then(loadFaults, (err) => setStatus(err.message, true)));
    const { id, match, action, matched, fired, ...limits } = f;
    return el('tr', {}, el('td', {}, id), el('td', {}, fields(match)),
      el('td', { title: fields(limits) }, fields(action)),
      el('td', {}, matched), el('td', {}, fired), el('td', {}, remove));
  }));
}

// {verb: "get", name: "x"} as `verb=get name=x`.
const fields = (obj) => Object.entries(obj || {})
  .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`).join(' ');

// ---- start ----

async function start() {
  $('namespace').addEventListener('change', (e) => {
    view.namespace = e.target.value;
    view.open = null;
    view.objects = new Map();
    $('object-title').textContent = 'pick an object';
    $('object-yaml').textContent = '';
    restartFollow();
    remember();
  });
  $('rediscover').addEventListener('click', () =>
    Promise.all([discover(), loadNamespaces()]).catch((err) => setStatus(err.message, true)));
  $('hide-own').addEventListener('change', loadRequests);
  $('only-faults').addEventListener('change', loadRequests);
  $('clear-requests').addEventListener('click', () =>
    request('/kubefake/v1/requests', { method: 'DELETE' }).then(loadRequests));
  try {
    await Promise.all([discover(), loadNamespaces()]);
    setStatus('pick a resource');
    recall();
  } catch (err) {
    setStatus(`discovery: ${err.message}`, true);
  }
  pollTooling();
}

start();
