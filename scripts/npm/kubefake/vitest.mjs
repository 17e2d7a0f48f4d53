// Vitest: `useKubefake()` in a test file (or a describe block) starts one server for it in
// beforeAll and stops it in afterAll.
import { afterAll, beforeAll } from 'vitest';
import kubefake from './index.cjs';

/** One server for the enclosing file or describe block; see index.d.ts. */
export function useKubefake(options = {}) {
  const hooks = { beforeAll, afterAll, hookTimeoutMs: kubefake.hookTimeout(options) };
  return kubefake.useKubefakeWith(hooks, options);
}

export const { startKubefake } = kubefake;
