import type { NextApiRequest, NextApiResponse } from 'next';

export default function echo(req: NextApiRequest, res: NextApiResponse): void {
  res.status(200).json({ parsed: req.body });
}
