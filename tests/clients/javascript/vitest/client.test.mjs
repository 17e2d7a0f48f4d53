// kubefake/vitest: the shared client suite (../shared/client-suite.mjs) run by Vitest.
import { describe, expect, test } from 'vitest';
import { useKubefake } from 'kubefake/vitest';
import { clientSuite } from '../shared/client-suite.mjs';

clientSuite({ runner: 'vitest', describe, test, expect, useKubefake });
