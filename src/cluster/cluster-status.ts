// Moved to src/coordination/cluster-status.ts (issue 18). Kept only for the import in
// src/http/routes/cluster-routes.ts, which the HTTP rework changes; delete this file then.
export { clusterStatus, type ClusterStatus, type ClusterStatusDeps } from '../coordination/cluster-status.js';
