/**
 * Preload (`node --import <this file>`, or in NODE_OPTIONS for every node process a command
 * starts): records each ES module resolution whose URL matches WP_IMPORT_RECORD_PATTERN into the
 * file WP_IMPORT_RECORD, one `<pid> <url>` line each. The tracing tests use it to show which
 * processes loaded OpenTelemetry. Does nothing without WP_IMPORT_RECORD.
 */
import { register } from 'node:module';

const file = process.env.WP_IMPORT_RECORD;
if (file) register('./import-recorder-hooks.mjs', import.meta.url, { data: { file, pattern: process.env.WP_IMPORT_RECORD_PATTERN ?? '' } });
