#!/usr/bin/env node
// `npx kubefake ...`: runs the platform's kubefake binary (from the @kubefake/<os>-<cpu> package
// npm installed beside this one) with the same arguments, passing signals on so that Ctrl-C and
// SIGTERM stop the server, and exits as it exits.
'use strict';
const { spawn } = require('node:child_process');
const { binaryPath } = require('../index.cjs');

let binary;
try {
  binary = binaryPath();
} catch (err) {
  console.error(`kubefake: ${err.message}`);
  process.exit(1);
}
const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => child.kill(signal));
}
child.on('error', (err) => {
  console.error(`kubefake: cannot run ${binary}: ${err.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
