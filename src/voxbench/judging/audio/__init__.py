"""The audio rubric judge: G-Eval over audio through realtime and audio-in models.

``rubric`` (the YAML schema, built-ins, parameters, hashes), ``prompt`` (what the judge is
told), ``parse`` (the strict evaluation form), ``realtime_judge`` / ``chat_judge`` (the
clients that hear the audio), ``engine`` (samples, retries, cache, segments, combining),
``segments`` (per-turn clips of a recorded run, splitting on silences), ``calibrate``
(the meta-evaluation against labels: ``labels``, ``metaeval``, ``agreement`` — κ and α —,
``calibration_text``; its HTML page is ``report.calibration``) and ``run_judge`` (the
``RunJudge`` behind ``voxbench judge RUN --audio-rubric``).
"""
