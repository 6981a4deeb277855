"""Tag tones: made to spec, found at the exact sample."""

from __future__ import annotations

import numpy as np
import pytest

from voxbench.audio.espeak import espeak_synthesize
from voxbench.audio.tags import find_tag_samples, find_tags, make_tag, mix_tag
from voxbench.audio.wav import Audio, concatenate


def test_tag_matches_the_public_spec():
    tag = make_tag(24000)
    assert len(tag) == 360  # 15 ms
    assert np.abs(tag).max() * 32767 == pytest.approx(8231, abs=2)  # -12 dBFS
    assert tag[0] == 0.0
    assert abs(tag[-1]) < 0.01  # faded out
    spectrum = np.abs(np.fft.rfft(tag, 24000))
    assert np.argmax(spectrum) == 2000


@pytest.mark.parametrize("rate", [8000, 16000, 22050, 24000, 44100, 48000])
def test_tags_found_at_the_right_sample_on_silence_and_over_speech(rate):
    speech = espeak_synthesize("Your booking is confirmed for ten in the morning.").resampled(rate)
    gap = Audio.silence(0.4, rate)
    audio = concatenate([Audio.silence(0.5, rate), speech, gap, speech, Audio.silence(0.3, rate)])
    on_silence = [0.25, 0.5 + speech.duration + 0.1]
    over_speech = [0.9, 1.6]
    for at in on_silence + over_speech:
        audio = mix_tag(audio, at)
    found = find_tag_samples(audio)
    assert len(found) == 4
    expected = {round(at * rate) for at in on_silence}
    assert expected <= set(found)  # exact where the tag sits on silence
    period = rate / 2000  # over loud speech, at worst one cycle of the tone off
    for at in over_speech:
        assert min(abs(k - at * rate) for k in found) <= period
    assert find_tags(audio) == pytest.approx([k / rate for k in found])


def test_tags_in_one_channel_of_a_stereo_recording():
    rate = 24000
    stereo = Audio(np.zeros((rate * 2, 2), np.float32), rate)
    stereo = mix_tag(stereo, 1.2345, channel=1)
    assert find_tag_samples(stereo, channel=1) == [round(1.2345 * rate)]
    assert find_tag_samples(stereo, channel=0) == []
    assert find_tag_samples(stereo) == [
        round(1.2345 * rate)
    ]  # 6 dB quieter in the mix, still found


def test_tags_survive_noise_and_resampling():
    rate = 48000
    audio = mix_tag(mix_tag(Audio.silence(2.0, rate), 0.5), 1.5)
    noise = np.random.default_rng(3).normal(0, 0.02, audio.frames).astype(np.float32)
    noisy = Audio(audio.samples + noise, rate)
    assert find_tag_samples(noisy) == [24000, 72000]
    assert find_tag_samples(noisy.resampled(16000)) == [8000, 24000]


def test_no_false_tags_from_a_whistle_speech_or_quiet_tones():
    rate = 24000
    t = np.arange(rate) / rate
    whistle = Audio((0.25 * np.sin(2 * np.pi * 2000 * t)).astype(np.float32), rate)
    assert find_tags(whistle) == []
    assert find_tags(espeak_synthesize("Testing one two three, is this thing on?")) == []
    faint = Audio(np.zeros(rate, np.float32), rate)
    faint.samples[1000:1360] += make_tag(rate) * 0.1  # 20 dB under a tag
    assert find_tags(faint) == []
    assert find_tags(Audio(np.zeros(100, np.float32), rate)) == []
