// fast-check run counts: the CI count by default, many more under `npm run soak` (SOAK=1).
export const runs = (ci: number, soak: number) => (process.env.SOAK === '1' ? soak : ci);
