import fc from 'fast-check';

// Fixed seed in CI and `npm test`; `npm run soak` (SOAK=1) explores with a fresh seed and many
// more runs. A failing soak prints its seed, so it can be replayed with FC_SEED=<n>.
const soak = process.env.SOAK === '1';
const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : soak ? Date.now() : 20261129;
fc.configureGlobal({ seed, ...(soak ? {} : {}) });
