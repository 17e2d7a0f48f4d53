// Jest: `useKubefake()` in a test file (or a describe block) starts one server for it in
// beforeAll and stops it in afterAll, with the hooks Jest gives every test file as globals.
'use strict';
const kubefake = require('./index.cjs');

/** One server for the enclosing file or describe block; see index.d.ts. */
function useKubefake(options = {}) {
  if (typeof beforeAll !== 'function' || typeof afterAll !== 'function') {
    throw new Error('kubefake/jest: beforeAll and afterAll are not defined (is this running ' +
      'under Jest, with injectGlobals on?)');
  }
  const hooks = { beforeAll, afterAll, hookTimeoutMs: kubefake.hookTimeout(options) };
  return kubefake.useKubefakeWith(hooks, options);
}

module.exports = { useKubefake, startKubefake: kubefake.startKubefake };
