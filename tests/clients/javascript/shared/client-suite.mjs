// The suite Vitest's and Jest's client tests share (vitest/client.test.mjs and
// jest/client.test.mjs): useKubefake() as a suite's fixture (the server is up in tests and
// stopped after them), @kubernetes/client-node against it (CRUD with the real codes, a watch, a
// custom resource whose CRD the fixture loaded), and the start-to-ready time in that runner.
// Each runner passes its own describe, test, expect and useKubefake; the matchers used here
// are the ones both runners share.
import { connect } from 'node:net';
import { existsSync } from 'node:fs';
import { ApiException, CoreV1Api, CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { startKubefake, useKubefakeWith } from 'kubefake';

// Whether something listens on the port of `url`.
function listening(url) {
  return new Promise((resolve) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

/** Registers the shared tests with `runner` ('vitest' or 'jest') and its hooks. */
export function clientSuite({ runner, describe, test, expect, useKubefake }) {
  const server = useKubefake({ crds: process.env.KUBEFAKE_CRDS });

  // What using the fixture before its beforeAll has run does.
  let tooEarly;
  try {
    void server.url;
  } catch (err) {
    tooEarly = err;
  }

  describe('useKubefake', () => {
    test('is a running server inside tests, an error before they start', async () => {
      expect(tooEarly?.message).toMatch(/the kubefake server is not running/);
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(existsSync(server.kubeconfig)).toBe(true);
      expect(server.kubeConfig().getCurrentCluster().server).toBe(server.url);
      expect(await listening(server.url)).toBe(true);
    });

    test('stops its server in afterAll', async () => {
      const before = [];
      const after = [];
      const fixture = useKubefakeWith({ beforeAll: (fn) => before.push(fn), afterAll: (fn) => after.push(fn) });
      expect(before.length).toBe(1);
      expect(after.length).toBe(1);
      await before[0]();
      const { url, kubeconfig } = fixture;
      expect(await listening(url)).toBe(true);
      await after[0]();
      expect(await listening(url)).toBe(false);
      expect(existsSync(kubeconfig)).toBe(false);
      expect(() => fixture.url).toThrow(/not running/);
    });

    test('start-to-ready time', async () => {
      const times = [];
      for (let i = 0; i < 10; i++) {
        const begin = process.hrtime.bigint();
        const started = await startKubefake();
        times.push(Number(process.hrtime.bigint() - begin) / 1e6);
        await started.stop();
      }
      times.sort((a, b) => a - b);
      process.stdout.write(`${runner} start-to-ready median ${times[5].toFixed(1)} ms (min ${times[0].toFixed(1)}, max ${times[9].toFixed(1)})\n`);
      expect(times.length).toBe(10);
    });
  });

  describe('@kubernetes/client-node', () => {
    test('creates, conflicts, reads and deletes a ConfigMap', async () => {
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      const body = { metadata: { name: 'crud' }, data: { a: '1' } };
      const created = await core.createNamespacedConfigMap({ namespace: 'default', body });
      expect(created.metadata.uid).toBeTruthy();
      const conflict = await core.createNamespacedConfigMap({ namespace: 'default', body })
        .then(() => null, (err) => err);
      expect(conflict).toBeInstanceOf(ApiException);
      expect(conflict.code).toBe(409);
      const read = await core.readNamespacedConfigMap({ namespace: 'default', name: 'crud' });
      expect(read.data).toEqual({ a: '1' });
      await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'crud' });
      const gone = await core.readNamespacedConfigMap({ namespace: 'default', name: 'crud' })
        .then(() => null, (err) => err);
      expect(gone.code).toBe(404);
    });

    test('watches a namespace receive ADDED', async () => {
      const kc = server.kubeConfig();
      const core = kc.makeApiClient(CoreV1Api);
      const seen = [];
      let done;
      const added = new Promise((resolve) => { done = resolve; });
      const request = await new Watch(kc).watch('/api/v1/namespaces', {}, (type, obj) => {
        seen.push(`${type} ${obj.metadata.name}`);
        if (type === 'ADDED' && obj.metadata.name === 'watched') done();
      }, () => {});
      await core.createNamespace({ body: { metadata: { name: 'watched' } } });
      await added;
      request.abort();
      expect(seen).toContain('ADDED watched');
    });

    test('serves the custom resources of the CRD it was given', async () => {
      const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
      const target = { group: 'stable.example.com', version: 'v1', namespace: 'default', plural: 'crontabs' };
      await custom.createNamespacedCustomObject({
        ...target,
        body: {
          apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'nightly' },
          spec: { cronSpec: '0 0 * * *', image: 'backup' },
        },
      });
      const read = await custom.getNamespacedCustomObject({ ...target, name: 'nightly' });
      expect(read.spec.image).toBe('backup');
    });
  });
}
