import bcrypt from 'bcryptjs';

const ROUNDS = 10;

export function hashPassword(password: string): Promise<string> {
  return bcrypt.hash(password, ROUNDS);
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return bcrypt.compare(password, hash);
}

/** A hash to compare against when the user does not exist, so timing does not reveal it. */
export const DUMMY_HASH = bcrypt.hashSync('not-a-real-password', ROUNDS);
