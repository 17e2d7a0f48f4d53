// kubefake/jest: the shared client suite (../shared/client-suite.mjs) run by Jest (describe,
// test and expect are Jest's globals).
import { useKubefake } from 'kubefake/jest';
import { clientSuite } from '../shared/client-suite.mjs';

clientSuite({ runner: 'jest', describe, test, expect, useKubefake });
