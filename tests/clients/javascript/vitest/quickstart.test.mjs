// README's Vitest quickstart: one server per test file, a typed client from its kubeconfig.
import { expect, test } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { useKubefake } from 'kubefake/vitest';

const server = useKubefake();

test('a ConfigMap round-trips', async () => {
  const core = server.kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'settings' }, data: { mode: 'test' } },
  });
  const read = await core.readNamespacedConfigMap({ namespace: 'default', name: 'settings' });
  expect(read.data).toEqual({ mode: 'test' });
});
