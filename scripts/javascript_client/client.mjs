// The official JavaScript client (@kubernetes/client-node) against kubefake, with the client's
// default kubeconfig handling: the CA and the bearer token come from the file `serve` wrote, no
// skipTLSVerify, no agent of our own. Typed APIs only: a namespace, ConfigMaps (create, list by
// label, read, replace, a stale replace, a merge patch), a watch, an access review, a self review.
// Run by scripts/javascript-client.sh with the kubeconfig path as its argument.
import {
  ApiException,
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  Watch,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';

const path = process.argv[2];
if (!path) {
  console.error('usage: node client.mjs KUBECONFIG');
  process.exit(2);
}

const ns = 'js';
let passed = 0;
const failures = [];

// step NAME FN: runs FN; a throw (or a rejected promise) fails the step with its message.
async function step(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    failures.push(name);
    console.log(`FAIL ${name}: ${describe(err)}`);
  }
}

// A failed check: its message says it all, no stack needed.
class Mismatch extends Error {}

function describe(err) {
  if (err instanceof ApiException) {
    const body = typeof err.body === 'string' ? err.body : JSON.stringify(err.body);
    return `HTTP ${err.code}: ${body}`;
  }
  if (err instanceof Mismatch) return err.message;
  return err && err.stack ? err.stack : String(err);
}

function expectEqual(what, got, want) {
  if (!isDeepStrictEqual(got, want)) {
    throw new Mismatch(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
}

function expect(what, ok, got) {
  if (!ok) {
    throw new Mismatch(`${what} (got ${JSON.stringify(got)})`);
  }
}

// expectApiError CODE REASON FN: FN must be refused with that HTTP code and Status reason.
async function expectApiError(code, reason, fn) {
  let result;
  try {
    result = await fn();
  } catch (err) {
    if (!(err instanceof ApiException)) throw err;
    const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
    expectEqual('HTTP code', err.code, code);
    expectEqual('Status reason', body && body.reason, reason);
    return body;
  }
  throw new Mismatch(`expected HTTP ${code} ${reason}, got success: ${JSON.stringify(result)}`);
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Mismatch(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const kc = new KubeConfig();
let core;
let authn;
let authz;

await step('load the kubeconfig written by serve (default handling)', async () => {
  kc.loadFromFile(path);
  const cluster = kc.getCurrentCluster();
  expect('current cluster', cluster, cluster);
  expect('server is https', cluster.server.startsWith('https://'), cluster.server);
  expect('CA data embedded', Boolean(cluster.caData), Object.keys(cluster));
  expect('TLS verification on', !cluster.skipTLSVerify, cluster.skipTLSVerify);
  const user = kc.getCurrentUser();
  expect('bearer token present', user && Boolean(user.token), user && Object.keys(user));
  core = kc.makeApiClient(CoreV1Api);
  authn = kc.makeApiClient(AuthenticationV1Api);
  authz = kc.makeApiClient(AuthorizationV1Api);
});
if (failures.length) {
  console.log('javascript client: cannot go on without a kubeconfig');
  process.exit(1);
}

await step('TLS is verified: without the kubeconfig CA the server is refused', async () => {
  // The same kubeconfig less its CA: the client falls back to Node's trust store, which does not
  // know the CA `serve` generated, so the handshake must fail (no silent skipTLSVerify).
  const cluster = kc.getCurrentCluster();
  const noCa = new KubeConfig();
  noCa.loadFromOptions({
    clusters: [{ name: 'no-ca', server: cluster.server, skipTLSVerify: false }],
    users: [{ name: 'admin', token: kc.getCurrentUser().token }],
    contexts: [{ name: 'no-ca', cluster: 'no-ca', user: 'admin' }],
    currentContext: 'no-ca',
  });
  let result;
  try {
    result = await noCa.makeApiClient(CoreV1Api).listNamespace();
  } catch (err) {
    const text = `${err && err.code} ${err && err.message}`;
    expect('a certificate verification error', /certificate|CERT|SELF_SIGNED/.test(text), text);
    return;
  }
  throw new Mismatch(`expected a TLS error, got ${result.items.length} namespaces`);
});

await step('create a namespace', async () => {
  const created = await core.createNamespace({ body: { metadata: { name: ns } } });
  expectEqual('created name', created.metadata?.name, ns);
  expect('uid set', Boolean(created.metadata?.uid), created.metadata);
  const read = await core.readNamespace({ name: ns });
  expectEqual('phase', read.status?.phase, 'Active');
});

await step('create a ConfigMap (returned data, labels, metadata)', async () => {
  const created = await core.createNamespacedConfigMap({
    namespace: ns,
    body: {
      metadata: { name: 'js-config', labels: { app: 'js', tier: 'web' } },
      data: { greeting: 'hello', old: 'gone soon' },
    },
  });
  expectEqual('name', created.metadata?.name, 'js-config');
  expectEqual('namespace', created.metadata?.namespace, ns);
  expectEqual('data', created.data, { greeting: 'hello', old: 'gone soon' });
  expectEqual('labels', created.metadata?.labels, { app: 'js', tier: 'web' });
  expect('resourceVersion set', Boolean(created.metadata?.resourceVersion), created.metadata);
  expect('creationTimestamp is a Date', created.metadata?.creationTimestamp instanceof Date,
    created.metadata?.creationTimestamp);
  // A second one the label selector below must leave out.
  await core.createNamespacedConfigMap({
    namespace: ns,
    body: { metadata: { name: 'js-other', labels: { app: 'other' } }, data: { a: 'b' } },
  });
});

await step('a second create of the same name is 409 AlreadyExists', async () => {
  await expectApiError(409, 'AlreadyExists', () =>
    core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'js-config' } } }));
});

await step('list ConfigMaps with a label selector', async () => {
  const list = await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app=js' });
  expectEqual('names', list.items.map((cm) => cm.metadata?.name), ['js-config']);
  expect('list resourceVersion set', Boolean(list.metadata?.resourceVersion), list.metadata);
  const set = await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app in (js,other),tier!=db' });
  expectEqual('set-based selector', set.items.map((cm) => cm.metadata?.name).sort(), ['js-config', 'js-other']);
});

await step('read a ConfigMap', async () => {
  const read = await core.readNamespacedConfigMap({ name: 'js-config', namespace: ns });
  expectEqual('data', read.data, { greeting: 'hello', old: 'gone soon' });
});

let staleVersion;
await step('replace a ConfigMap', async () => {
  const read = await core.readNamespacedConfigMap({ name: 'js-config', namespace: ns });
  staleVersion = read.metadata?.resourceVersion;
  read.data = { ...read.data, greeting: 'hi' };
  const replaced = await core.replaceNamespacedConfigMap({ name: 'js-config', namespace: ns, body: read });
  expectEqual('data', replaced.data, { greeting: 'hi', old: 'gone soon' });
  expect('resourceVersion changed', replaced.metadata?.resourceVersion !== staleVersion, replaced.metadata);
});

await step('a replace with a stale resourceVersion is 409 Conflict', async () => {
  await expectApiError(409, 'Conflict', () => core.replaceNamespacedConfigMap({
    name: 'js-config',
    namespace: ns,
    body: { metadata: { name: 'js-config', resourceVersion: staleVersion }, data: { greeting: 'lost' } },
  }));
});

await step('merge-patch a ConfigMap (PatchStrategy.MergePatch)', async () => {
  // The client's patch calls default to a JSON patch; a merge patch is asked for by its
  // Content-Type, through the call's options.
  const patched = await core.patchNamespacedConfigMap(
    {
      name: 'js-config',
      namespace: ns,
      body: { metadata: { labels: { patched: 'yes' } }, data: { extra: '1', old: null } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  expectEqual('data', patched.data, { extra: '1', greeting: 'hi' });
  expectEqual('labels', patched.metadata?.labels, { app: 'js', patched: 'yes', tier: 'web' });
  const read = await core.readNamespacedConfigMap({ name: 'js-config', namespace: ns });
  expectEqual('data read back', read.data, { extra: '1', greeting: 'hi' });
});

await step('a JSON patch (the client default) with a failing test op is 422 Invalid', async () => {
  await expectApiError(422, 'Invalid', () => core.patchNamespacedConfigMap({
    name: 'js-config',
    namespace: ns,
    body: [{ op: 'test', path: '/data/greeting', value: 'not hi' }],
  }));
});

await step('watch ConfigMaps: ADDED for a new one, then abort', async () => {
  const list = await core.listNamespacedConfigMap({ namespace: ns });
  const events = [];
  let sawAdded;
  const added = new Promise((resolve) => { sawAdded = resolve; });
  let ended;
  let endedEarly = false;
  let endError;
  const done = new Promise((resolve) => { ended = resolve; });
  const watch = new Watch(kc);
  const controller = await watch.watch(
    `/api/v1/namespaces/${ns}/configmaps`,
    { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: false },
    (type, obj) => {
      events.push([type, obj?.metadata?.name]);
      if (type === 'ADDED' && obj?.metadata?.name === 'js-watched') sawAdded(obj);
    },
    (err) => { endedEarly = true; endError = err; ended(err); },
  );
  try {
    // `watch` resolves once the response headers are in; a refused watch has ended by then.
    if (endedEarly) throw new Mismatch(`the watch ended before any change: ${describe(endError)}`);
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'js-watched' }, data: { seen: 'yes' } },
    });
    const obj = await withTimeout(added, 10000, 'the ADDED event of js-watched');
    expectEqual('event object data', obj.data, { seen: 'yes' });
    expectEqual('events', events, [['ADDED', 'js-watched']]);
  } finally {
    controller.abort();
  }
  await withTimeout(done, 5000, 'the watch to end after abort');
});

await step('SelfSubjectAccessReview: the admin may create ConfigMaps', async () => {
  const review = await authz.createSelfSubjectAccessReview({
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { namespace: ns, verb: 'create', resource: 'configmaps' } },
    },
  });
  expectEqual('status.allowed', review.status?.allowed, true);
  expectEqual('spec echoed', review.spec?.resourceAttributes?.resource, 'configmaps');
});

await step('SelfSubjectReview: the kubeconfig user is system:admin', async () => {
  const review = await authn.createSelfSubjectReview({
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  });
  const user = review.status?.userInfo;
  expectEqual('username', user?.username, 'system:admin');
  expect('groups include system:masters and system:authenticated',
    user?.groups?.includes('system:masters') && user?.groups?.includes('system:authenticated'), user?.groups);
});

await step('delete the namespace (and it goes away)', async () => {
  await core.deleteNamespace({ name: ns });
  const deadline = Date.now() + 10000;
  for (;;) {
    try {
      const read = await core.readNamespace({ name: ns });
      if (Date.now() > deadline) {
        throw new Mismatch(`namespace still there after 10 s: ${JSON.stringify(read.status)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) break;
      throw err;
    }
  }
  await expectApiError(404, 'NotFound', () => core.readNamespacedConfigMap({ name: 'js-config', namespace: ns }));
});

if (failures.length) {
  console.log(`javascript client: ${failures.length} of ${passed + failures.length} checks failed: ${failures.join('; ')}`);
  process.exit(1);
}
console.log(`javascript client: all ${passed} checks passed`);
process.exit(0);
