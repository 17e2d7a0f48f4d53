// kubefake for JavaScript tests: where the binary is, and `startKubefake()`, which runs
// `kubefake serve` on a free port and resolves once the server is ready. Plain CommonJS so that
// Jest loads it as it is; index.mjs re-exports it for ES modules (Node's test runner, Vitest).
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

/** The platform package npm installed for this machine, such as `@kubefake/linux-x64`. */
function platformPackage() {
  return `@kubefake/${process.platform}-${process.arch}`;
}

/**
 * The kubefake binary: $KUBEFAKE_BIN when set (a locally built one), else the one shipped in the
 * platform package. Throws, naming the package, when neither is there.
 */
function binaryPath() {
  if (process.env.KUBEFAKE_BIN) return process.env.KUBEFAKE_BIN;
  const pkg = platformPackage();
  const exe = process.platform === 'win32' ? 'kubefake.exe' : 'kubefake';
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new Error(`no kubefake binary for ${process.platform}-${process.arch}: the optional ` +
      `dependency ${pkg} is not installed (was it installed with --no-optional, or is the ` +
      'platform not published?); set KUBEFAKE_BIN to a kubefake binary to use that one');
  }
  return path.join(dir, 'bin', exe);
}

// Flags for each path of a string-or-array option.
function repeat(flag, value) {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]).flatMap((v) => [flag, String(v)]);
}

// Loaded once the server is up, so that kubeConfig() can stay synchronous; absent is fine
// until kubeConfig() is called.
async function loadClient() {
  try {
    return await import('@kubernetes/client-node');
  } catch {
    return null;
  }
}

// Waits for the KUBEFAKE_URL and KUBECONFIG lines; rejects on exit, error or timeout.
function whenReady(child, timeoutMs, stderrTail) {
  return new Promise((resolve, reject) => {
    let url;
    const lines = readline.createInterface({ input: child.stdout });
    const fail = (why) => {
      clearTimeout(timer);
      lines.close();
      child.kill('SIGKILL');
      reject(new Error(`kubefake serve ${why}${stderrTail() ? `:\n${stderrTail()}` : ''}`));
    };
    const timer = setTimeout(() => fail(`was not ready after ${timeoutMs} ms`), timeoutMs);
    const onError = (err) => fail(`could not start (${err.message})`);
    const onExit = (code, signal) => fail(`exited before it was ready (${signal ?? `code ${code}`})`);
    child.once('error', onError);
    child.once('exit', onExit);
    lines.on('line', (line) => {
      if (line.startsWith('KUBEFAKE_URL=')) url = line.slice('KUBEFAKE_URL='.length);
      if (line.startsWith('KUBECONFIG=') && url) {
        clearTimeout(timer);
        child.removeListener('exit', onExit);
        child.removeListener('error', onError);
        resolve({ url, kubeconfig: line.slice('KUBECONFIG='.length) });
      }
    });
  });
}

/**
 * Starts `kubefake serve` on 127.0.0.1 and a free port and resolves once it serves (CRDs and
 * objects given are loaded by then). The server is HTTPS with a generated CA and RBAC, as
 * `serve` is; the kubeconfig it wrote carries the CA and an admin token. Call `stop()` (or use
 * `await using`) when the test is done; a server still running when Node exits is killed.
 */
async function startKubefake(options = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubefake-'));
  const args = ['serve', '--port', '0', '--kubeconfig', path.join(dir, 'kubeconfig'),
    ...repeat('--crds', options.crds), ...repeat('--objects', options.objects),
    ...(options.http ? ['--http'] : []), ...(options.simulate ? ['--simulate'] : []),
    ...(options.args ?? [])];
  const child = spawn(options.binary ?? binaryPath(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => { stderr = (stderr + chunk).slice(-8192); });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let ready;
  try {
    ready = await whenReady(child, options.timeoutMs ?? 30000, () => stderr.trim());
  } catch (err) {
    process.removeListener('exit', killOnExit);
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  child.stdout.resume();
  const client = await loadClient();
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    process.removeListener('exit', killOnExit);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return {
    url: ready.url,
    kubeconfig: ready.kubeconfig,
    kubeConfig() {
      if (!client) throw new Error('kubeConfig() needs @kubernetes/client-node: npm install @kubernetes/client-node');
      const kc = new client.KubeConfig();
      kc.loadFromFile(ready.kubeconfig);
      return kc;
    },
    stop,
    [Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose')]: stop,
  };
}

/**
 * One server for a suite, with any test runner's suite hooks: started in `beforeAll`, stopped
 * in `afterAll`. Returns a handle to it, usable in tests and in hooks declared after this call
 * (Vitest and Jest run `beforeAll` hooks in declaration order). `kubefake/vitest` and
 * `kubefake/jest` call this with their runner's hooks; with Node's test runner, pass
 * `{ beforeAll: before, afterAll: after }`. `hookTimeoutMs`, when given, is passed to the hooks
 * as Vitest and Jest take it (their defaults, 10 s and 5 s, are too short for a loaded machine).
 */
function useKubefakeWith({ beforeAll, afterAll, hookTimeoutMs }, options = {}) {
  if (typeof beforeAll !== 'function' || typeof afterAll !== 'function') {
    throw new TypeError('useKubefakeWith needs the test runner\'s beforeAll and afterAll');
  }
  let server;
  const current = () => {
    if (!server) {
      throw new Error('the kubefake server is not running: use it in a test, or in a hook ' +
        'declared after useKubefake(), not at the top level of the file');
    }
    return server;
  };
  const timeout = hookTimeoutMs === undefined ? [] : [hookTimeoutMs];
  beforeAll(async () => { server = await startKubefake(options); }, ...timeout);
  afterAll(async () => {
    const running = server;
    server = undefined;
    if (running) await running.stop();
  }, ...timeout);
  return {
    get url() { return current().url; },
    get kubeconfig() { return current().kubeconfig; },
    kubeConfig() { return current().kubeConfig(); },
  };
}

// What the Vitest and Jest hooks may take: the start's own timeout and a margin to stop.
function hookTimeout(options = {}) {
  return (options.timeoutMs ?? 30000) + 10000;
}

module.exports = { startKubefake, useKubefakeWith, hookTimeout, binaryPath, platformPackage };
