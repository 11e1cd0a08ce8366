/**
 * Password hashes: bcrypt (bcryptjs's format, `$2b$10$…`), cost 10. The hashing and comparing
 * itself runs on worker threads (password-hasher.ts), never on the event loop.
 */

export const BCRYPT_ROUNDS = 10;

/**
 * A hash to compare against when the user does not exist, so timing does not reveal it: the hash
 * of a random password nobody kept, at the same cost as real ones (so the check costs the same).
 */
export const DUMMY_HASH = '$2b$10$LlbnO/RPmrcdZTt8juXbnuBJ1p6okN6oH4Uzxe2nfU0wK.9fEWcgm';
