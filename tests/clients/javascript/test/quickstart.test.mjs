// README's JavaScript quickstart: one server per test file, a typed client from its kubeconfig.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api } from '@kubernetes/client-node';
import { startKubefake } from 'kubefake';

let server;
before(async () => { server = await startKubefake(); });
after(() => server.stop());

test('a ConfigMap round-trips', async () => {
  const core = server.kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'settings' }, data: { mode: 'test' } },
  });
  const read = await core.readNamespacedConfigMap({ namespace: 'default', name: 'settings' });
  assert.deepEqual(read.data, { mode: 'test' });
});
