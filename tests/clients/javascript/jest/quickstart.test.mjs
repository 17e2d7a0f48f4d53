// README's Jest quickstart: one server per test file, a typed client from its kubeconfig
// (test and expect are the globals Jest gives every test file).
import { CoreV1Api } from '@kubernetes/client-node';
import { useKubefake } from 'kubefake/jest';

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
